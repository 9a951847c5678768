package replay

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"math/big"
	"net"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
)

// TestTLS replays against a broker that speaks MQTT over TLS with a
// certificate of a private CA, which the client trusts (as --ca does).
func TestTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "broker.test"},
		DNSNames: []string{"broker.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	srv := mqtt.New(&mqtt.Options{InlineClient: false, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv.AddHook(new(auth.AllowHook), nil)
	srv.AddListener(listeners.NewTCP(listeners.Config{ID: "tls", Address: addr,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}))
	if err := srv.Serve(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	rep, err := Run(context.Background(), spread(20, 100*time.Millisecond), Options{Broker: addr,
		TLS: &tls.Config{ServerName: "broker.test", RootCAs: pool}, Hold: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ConnectsAccepted != 20 {
		t.Errorf("over TLS: %+v", rep)
	}
	// without the CA the handshake fails: every connect fails, none is accepted
	rep, err = Run(context.Background(), spread(5, 50*time.Millisecond), Options{Broker: addr, TLS: &tls.Config{ServerName: "broker.test"}})
	if err != nil || rep.ConnectsFailed != 5 {
		t.Errorf("an untrusted certificate: %+v, %v", rep, err)
	}
}
