package replay

import (
	"bytes"
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"
)

// sessionStore is the embedded broker's persistence
// (BrokerOptions.Persistent): a mochi storage hook that keeps the
// persistent sessions, their subscriptions and the QoS 1 and 2 messages
// they hold in memory, and outlives each mochi server, so that a broker
// started again loads them as one reading a database would. It stores
// each message under its client and packet id (mochi's bolt hook stores
// no packet id, so that every message it loads has id 0 and all but one
// are lost).
type sessionStore struct {
	mqtt.HookBase
	mu       sync.Mutex
	clients  map[string]storage.Client
	subs     map[string]map[string]storage.Subscription // client -> filter
	inflight map[string]map[uint16]storage.Message      // client -> packet id
}

func newSessionStore() *sessionStore {
	return &sessionStore{clients: map[string]storage.Client{}, subs: map[string]map[string]storage.Subscription{},
		inflight: map[string]map[uint16]storage.Message{}}
}

func (s *sessionStore) ID() string { return "stormaudit-sessions" }

func (s *sessionStore) Provides(b byte) bool {
	return bytes.Contains([]byte{mqtt.OnSessionEstablished, mqtt.OnDisconnect, mqtt.OnSubscribed, mqtt.OnUnsubscribed,
		mqtt.OnQosPublish, mqtt.OnQosComplete, mqtt.OnQosDropped, mqtt.OnClientExpired,
		mqtt.StoredClients, mqtt.StoredSubscriptions, mqtt.StoredInflightMessages}, []byte{b})
}

// OnSessionEstablished stores the client, without its will: a broker
// that went down does not send it when it comes back.
func (s *sessionStore) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[cl.ID] = storage.Client{ID: cl.ID, T: storage.ClientKey, Listener: cl.Net.Listener, Username: cl.Properties.Username,
		Clean: cl.Properties.Clean, ProtocolVersion: cl.Properties.ProtocolVersion,
		Properties: storage.ClientProperties{SessionExpiryInterval: cl.Properties.Props.SessionExpiryInterval,
			ReceiveMaximum: cl.Properties.Props.ReceiveMaximum}}
}

// OnDisconnect forgets a session that ends with its connection.
func (s *sessionStore) OnDisconnect(cl *mqtt.Client, _ error, expire bool) {
	if expire && cl.StopCause() != packets.ErrSessionTakenOver {
		s.forget(cl.ID)
	}
}

// OnClientExpired forgets an expired session.
func (s *sessionStore) OnClientExpired(cl *mqtt.Client) { s.forget(cl.ID) }

func (s *sessionStore) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.clients, id)
	delete(s.subs, id)
	delete(s.inflight, id)
}

// OnSubscribed stores the subscriptions granted.
func (s *sessionStore) OnSubscribed(cl *mqtt.Client, pk packets.Packet, codes []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range pk.Filters {
		if i >= len(codes) || codes[i] >= 0x80 {
			continue
		}
		if s.subs[cl.ID] == nil {
			s.subs[cl.ID] = map[string]storage.Subscription{}
		}
		s.subs[cl.ID][f.Filter] = storage.Subscription{T: storage.SubscriptionKey, Client: cl.ID, Filter: f.Filter, Qos: codes[i],
			Identifier: f.Identifier, NoLocal: f.NoLocal, RetainHandling: f.RetainHandling, RetainAsPublished: f.RetainAsPublished}
	}
}

// OnUnsubscribed forgets the subscriptions ended.
func (s *sessionStore) OnUnsubscribed(cl *mqtt.Client, pk packets.Packet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range pk.Filters {
		delete(s.subs[cl.ID], f.Filter)
	}
}

// OnQosPublish stores a message the session holds (queued or in flight).
func (s *sessionStore) OnQosPublish(cl *mqtt.Client, pk packets.Packet, sent int64, _ int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[cl.ID] == nil {
		s.inflight[cl.ID] = map[uint16]storage.Message{}
	}
	s.inflight[cl.ID][pk.PacketID] = storage.Message{T: storage.InflightKey, Client: cl.ID, Origin: pk.Origin, FixedHeader: pk.FixedHeader,
		TopicName: pk.TopicName, Payload: pk.Payload, Created: pk.Created, Sent: sent, PacketID: pk.PacketID}
}

// OnQosComplete forgets a message acknowledged.
func (s *sessionStore) OnQosComplete(cl *mqtt.Client, pk packets.Packet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inflight[cl.ID], pk.PacketID)
}

// OnQosDropped forgets a message dropped.
func (s *sessionStore) OnQosDropped(cl *mqtt.Client, pk packets.Packet) { s.OnQosComplete(cl, pk) }

// StoredClients returns the sessions for a server starting.
func (s *sessionStore) StoredClients() ([]storage.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := make([]storage.Client, 0, len(s.clients))
	for _, c := range s.clients {
		v = append(v, c)
	}
	return v, nil
}

// StoredSubscriptions returns the subscriptions for a server starting.
func (s *sessionStore) StoredSubscriptions() ([]storage.Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return flatten(s.subs), nil
}

// StoredInflightMessages returns the messages held for a server starting.
func (s *sessionStore) StoredInflightMessages() ([]storage.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return flatten(s.inflight), nil
}

// flatten returns the values of the maps of m.
func flatten[K, L comparable, V any](m map[K]map[L]V) []V {
	var v []V
	for _, inner := range m {
		for _, x := range inner {
			v = append(v, x)
		}
	}
	return v
}
