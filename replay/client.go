package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// The MQTT protocol versions replay speaks.
const (
	MQTT311 byte = 4
	MQTT5   byte = 5
)

// client is one device's MQTT connection: a minimal client on mochi's
// packets package that sends CONNECT and waits for CONNACK, publishes
// QoS 0, pings, and disconnects. It never reconnects by itself: the
// schedule owns every socket-open.
type client struct {
	nc    net.Conn
	br    *bufio.Reader
	proto byte
	wmu   sync.Mutex // serialises writes: the pinger and the owner write
	done  chan struct{}
	once  sync.Once
	eof   chan struct{} // closed when keep's reader has seen the connection end; nil without keep
}

// errRefused is a CONNACK that refused the connect; its code is the
// CONNACK's return code (3.1.1) or reason code (5).
type errRefused struct{ code byte }

func (e errRefused) Error() string {
	return fmt.Sprintf("CONNACK refused the connect with code 0x%02x", e.code)
}

// connectParams are what a CONNECT carries.
type connectParams struct {
	clientID   string
	clean      bool
	keepalive  uint16
	willTopic  string
	willOnline []byte // the will's payload ("offline")
	username   []byte
	password   []byte
}

// sessionExpiry is the Session Expiry Interval of an MQTT 5 CONNECT
// without clean start: the session never expires, as a 3.1.1 session
// without clean_session does not.
const sessionExpiry = 0xFFFFFFFF

// dial opens the socket to addr (TLS when tlsConf is set) before
// deadline.
func dial(ctx context.Context, addr string, tlsConf *tls.Config, deadline time.Time) (net.Conn, error) {
	d := net.Dialer{Deadline: deadline}
	if tlsConf != nil {
		td := tls.Dialer{NetDialer: &d, Config: tlsConf}
		return td.DialContext(ctx, "tcp", addr)
	}
	return d.DialContext(ctx, "tcp", addr)
}

// connect sends CONNECT over nc and waits for the CONNACK until deadline.
// It returns the client on success, errRefused for a refusal, and the
// network's error otherwise (a timeout is a net.Error that says so).
func connect(nc net.Conn, proto byte, p connectParams, deadline time.Time) (*client, bool, error) {
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect}, ProtocolVersion: proto,
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), ClientIdentifier: p.clientID, Clean: p.clean,
			Keepalive: p.keepalive, WillFlag: p.willTopic != "", WillTopic: p.willTopic, WillPayload: p.willOnline, WillRetain: p.willTopic != "",
			UsernameFlag: p.username != nil, Username: p.username, PasswordFlag: p.password != nil, Password: p.password}}
	if proto == MQTT5 && !p.clean {
		pk.Properties.SessionExpiryInterval, pk.Properties.SessionExpiryIntervalFlag = sessionExpiry, true
	}
	if proto == MQTT5 {
		pk.Properties.MaximumPacketSize = MaxPacketSize
	}
	var buf bytes.Buffer
	if err := pk.ConnectEncode(&buf); err != nil {
		return nil, false, err
	}
	nc.SetDeadline(deadline)
	if _, err := nc.Write(buf.Bytes()); err != nil {
		return nil, false, err
	}
	c := &client{nc: nc, br: bufio.NewReaderSize(nc, 512), proto: proto, done: make(chan struct{})}
	fh, body, err := c.readPacket(MaxConnackSize)
	if err != nil {
		return nil, false, err
	}
	if fh.Type != packets.Connack {
		return nil, false, errProtocol{fmt.Sprintf("expected CONNACK, found packet type %d", fh.Type)}
	}
	ack := packets.Packet{FixedHeader: fh, ProtocolVersion: proto}
	if err := ack.ConnackDecode(body); err != nil {
		return nil, false, errProtocol{"CONNACK: " + err.Error()}
	}
	if ack.ReasonCode != 0 {
		return nil, false, errRefused{ack.ReasonCode}
	}
	nc.SetDeadline(time.Time{})
	return c, ack.SessionPresent, nil
}

// The largest packets the replay's client reads: a CONNACK (a few bytes,
// and an MQTT 5 broker's properties), and any other packet (a PUBLISH of
// a queued message, at most MaxPacketSize: an MQTT 5 CONNECT declares it
// as its Maximum Packet Size). A broker that sends more breaks the
// protocol: the connection is dropped and counted as the broker's
// protocol error, never allocated.
const (
	MaxConnackSize = 4 << 10
	MaxPacketSize  = 1 << 20
)

// errProtocol is a packet from the broker that breaks the protocol: over
// the size the replay reads, or malformed.
type errProtocol struct{ why string }

func (e errProtocol) Error() string { return "the broker broke the protocol: " + e.why }

// readPacket reads one packet of at most max bytes after its fixed
// header: its fixed header and the rest of it.
func (c *client) readPacket(max int) (packets.FixedHeader, []byte, error) {
	var fh packets.FixedHeader
	b, err := c.br.ReadByte()
	if err != nil {
		return fh, nil, err
	}
	if err := fh.Decode(b); err != nil {
		return fh, nil, errProtocol{fmt.Sprintf("fixed header 0x%02x: %v", b, err)}
	}
	n, _, err := packets.DecodeLength(c.br)
	if err != nil {
		var ne net.Error
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) || errors.Is(err, net.ErrClosed) {
			return fh, nil, err // the connection's end, not a malformed length
		}
		return fh, nil, errProtocol{"remaining length: " + err.Error()}
	}
	if n > max {
		return fh, nil, errProtocol{fmt.Sprintf("a packet of type %d declares %d bytes, over the %d the replay reads", fh.Type, n, max)}
	}
	fh.Remaining = n
	body := make([]byte, n)
	_, err = io.ReadFull(c.br, body)
	return fh, body, err
}

// write encodes a packet with enc and writes it.
func (c *client) write(pk packets.Packet, enc func(*packets.Packet, *bytes.Buffer) error) error {
	var buf bytes.Buffer
	if err := enc(&pk, &buf); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.nc.Write(buf.Bytes())
	return err
}

// publish sends a QoS 0 message.
func (c *client) publish(topic string, payload []byte, retain bool) error {
	return c.write(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Retain: retain}, ProtocolVersion: c.proto,
		TopicName: topic, Payload: payload}, (*packets.Packet).PublishEncode)
}

// subscribe subscribes to filter at QoS qos, with packet id 1.
func (c *client) subscribe(filter string, qos byte) error { return c.subscribeID(filter, qos, 1) }

// subscribeID subscribes to filter at QoS qos with packet id id.
func (c *client) subscribeID(filter string, qos byte, id uint16) error {
	return c.write(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, ProtocolVersion: c.proto, PacketID: id,
		Filters: packets.Subscriptions{{Filter: filter, Qos: qos}}}, (*packets.Packet).SubscribeEncode)
}

// publishQoS sends a PUBLISH of QoS 1 or 2 with packet id id; dup marks a
// resend; expiry, when not 0, is its MQTT 5 message expiry interval, s.
func (c *client) publishQoS(topic string, payload []byte, qos byte, id uint16, dup bool, expiry uint32) error {
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: qos, Dup: dup}, ProtocolVersion: c.proto,
		TopicName: topic, Payload: payload, PacketID: id}
	if c.proto == MQTT5 {
		pk.Properties.MessageExpiryInterval = expiry
	}
	return c.write(pk, (*packets.Packet).PublishEncode)
}

// ackEncoders encode the acknowledgements of a QoS 1 or 2 flow.
var ackEncoders = map[byte]func(*packets.Packet, *bytes.Buffer) error{
	packets.Puback: (*packets.Packet).PubackEncode, packets.Pubrec: (*packets.Packet).PubrecEncode,
	packets.Pubrel: (*packets.Packet).PubrelEncode, packets.Pubcomp: (*packets.Packet).PubcompEncode,
}

// sendAck sends a PUBACK, PUBREC, PUBREL or PUBCOMP (typ) for packet id id.
func (c *client) sendAck(typ byte, id uint16) error {
	var qos byte
	if typ == packets.Pubrel {
		qos = 1 // [MQTT-3.6.1-1]
	}
	return c.write(packets.Packet{FixedHeader: packets.FixedHeader{Type: typ, Qos: qos}, ProtocolVersion: c.proto, PacketID: id}, ackEncoders[typ])
}

// packetID returns the packet identifier that begins an acknowledgement's
// body, 0 if it is too short.
func packetID(body []byte) uint16 {
	if len(body) < 2 {
		return 0
	}
	return uint16(body[0])<<8 | uint16(body[1])
}

// await reads packets until one of type typ arrives, before deadline.
func (c *client) await(typ byte, deadline time.Time) error {
	c.nc.SetReadDeadline(deadline)
	defer c.nc.SetReadDeadline(time.Time{})
	for {
		fh, _, err := c.readPacket(MaxPacketSize)
		if err != nil {
			return err
		}
		if fh.Type == typ {
			return nil
		}
	}
}

// keep reads what the broker sends, and pings it whenever keepalive/2
// passes without a packet from it, until the connection ends; lost is
// called once if the broker ends it (not on close), and on with every
// packet received but PINGRESP. One goroutine a connection: the read
// deadline is the ping timer.
func (c *client) keep(keepalive uint16, lost func(error), on func(packets.FixedHeader, []byte)) {
	c.eof = make(chan struct{})
	ping := time.Duration(keepalive) * time.Second / 2
	go func() {
		defer close(c.eof)
		for {
			if ping > 0 {
				c.nc.SetReadDeadline(time.Now().Add(ping))
			}
			fh, body, err := c.readPacket(MaxPacketSize)
			if ping > 0 && timedOut(err) && !c.stopped() {
				if c.write(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Pingreq}, ProtocolVersion: c.proto},
					(*packets.Packet).PingreqEncode) == nil {
					continue
				}
			}
			if err != nil {
				if c.stop() && lost != nil { // the broker ended it, not us
					lost(err)
				}
				return
			}
			if fh.Type != packets.Pingresp && on != nil {
				on(fh, body)
			}
		}
	}()
}

// decodePublish decodes a PUBLISH's body.
func (c *client) decodePublish(fh packets.FixedHeader, body []byte) (packets.Packet, bool) {
	pk := packets.Packet{FixedHeader: fh, ProtocolVersion: c.proto}
	return pk, fh.Type == packets.Publish && pk.PublishDecode(body) == nil
}

// stopped reports whether the connection was ended.
func (c *client) stopped() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop marks the connection ended, once.
func (c *client) stop() bool {
	first := false
	c.once.Do(func() { close(c.done); first = true })
	return first
}

// disconnect ends the connection gracefully: DISCONNECT, and the broker,
// which sends no will, closes the connection; this side closes it once
// the broker has (or after a second). The socket's TIME_WAIT is then the
// broker's: thousands of them on this side would make the kernel search
// long for a free port at every connect.
func (c *client) disconnect() {
	if !c.stop() {
		return
	}
	if c.write(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Disconnect}, ProtocolVersion: c.proto},
		(*packets.Packet).DisconnectEncode) == nil {
		c.nc.SetReadDeadline(time.Now().Add(time.Second))
		if c.eof != nil {
			<-c.eof // keep's reader reads to the broker's close
		} else {
			io.Copy(io.Discard, c.br)
		}
	}
	c.nc.Close()
}

// drop ends the connection without DISCONNECT, as a lost link does: the
// broker sends the will. It resets the connection (SO_LINGER 0), leaving
// no TIME_WAIT.
func (c *client) drop() {
	if c.stop() {
		if tc, ok := c.nc.(interface{ SetLinger(int) error }); ok {
			tc.SetLinger(0)
		}
		c.nc.Close()
	}
}

// timedOut reports whether err is a deadline that passed.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
}
