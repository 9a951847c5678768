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
	var buf bytes.Buffer
	if err := pk.ConnectEncode(&buf); err != nil {
		return nil, false, err
	}
	nc.SetDeadline(deadline)
	if _, err := nc.Write(buf.Bytes()); err != nil {
		return nil, false, err
	}
	c := &client{nc: nc, br: bufio.NewReaderSize(nc, 512), proto: proto, done: make(chan struct{})}
	fh, body, err := c.readPacket()
	if err != nil {
		return nil, false, err
	}
	if fh.Type != packets.Connack {
		return nil, false, fmt.Errorf("expected CONNACK, found packet type %d", fh.Type)
	}
	ack := packets.Packet{FixedHeader: fh, ProtocolVersion: proto}
	if err := ack.ConnackDecode(body); err != nil {
		return nil, false, err
	}
	if ack.ReasonCode != 0 {
		return nil, false, errRefused{ack.ReasonCode}
	}
	nc.SetDeadline(time.Time{})
	return c, ack.SessionPresent, nil
}

// readPacket reads one packet: its fixed header and the rest of it.
func (c *client) readPacket() (packets.FixedHeader, []byte, error) {
	var fh packets.FixedHeader
	b, err := c.br.ReadByte()
	if err != nil {
		return fh, nil, err
	}
	if err := fh.Decode(b); err != nil {
		return fh, nil, err
	}
	n, _, err := packets.DecodeLength(c.br)
	if err != nil {
		return fh, nil, err
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

// subscribe subscribes to filter at QoS 0.
func (c *client) subscribe(filter string) error {
	return c.write(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, ProtocolVersion: c.proto, PacketID: 1,
		Filters: packets.Subscriptions{{Filter: filter}}}, (*packets.Packet).SubscribeEncode)
}

// keep reads what the broker sends, and pings it whenever keepalive/2
// passes without a packet from it, until the connection ends; lost is
// called once if the broker ends it (not on close), and message with
// every PUBLISH received. One goroutine a connection: the read deadline is
// the ping timer.
func (c *client) keep(keepalive uint16, lost func(error), message func(packets.Packet)) {
	c.eof = make(chan struct{})
	ping := time.Duration(keepalive) * time.Second / 2
	go func() {
		defer close(c.eof)
		for {
			if ping > 0 {
				c.nc.SetReadDeadline(time.Now().Add(ping))
			}
			fh, body, err := c.readPacket()
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
			if fh.Type == packets.Publish && message != nil {
				pk := packets.Packet{FixedHeader: fh, ProtocolVersion: c.proto}
				if pk.PublishDecode(body) == nil {
					message(pk)
				}
			}
		}
	}()
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
		if tc, ok := c.nc.(*net.TCPConn); ok {
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
