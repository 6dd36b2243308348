package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/agent"
	"github.com/countersign/countersign/agent/agenttest"
	"github.com/countersign/countersign/approval/memstore"
	"github.com/countersign/countersign/risk"
	"github.com/countersign/countersign/tools"
	"github.com/countersign/countersign/tools/shelltool"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// realGate is an agent over the memory store with the command tool.
func realGate(t *testing.T) *agent.Agent {
	t.Helper()
	sh, err := shelltool.New(shelltool.Config{Root: t.TempDir(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(sh)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := risk.New(risk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New(memstore.Options{Logger: quiet})
	t.Cleanup(func() { _ = st.Close() })
	a, err := agent.New(agent.Config{}, agent.Deps{Tools: reg, Policy: pol, Store: st, Sink: &agenttest.Sink{}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "countersign test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return cert, key, pool
}

// TestListenTLS: with a certificate the gateway serves HTTPS; a pair that
// does not load stops the start with the keys named.
func TestListenTLS(t *testing.T) {
	cert, key, pool := selfSigned(t)
	getenv := func(string) string { return "tls-token-0123456789abcdef" }
	log := quiet
	agents := map[string]AgentConfig{"ci": {TokenEnv: "T", Channel: "terminal"}}

	bad, err := New(Config{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: cert, Agents: agents}, Deps{Gate: realGate(t), Getenv: getenv, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Listen(); err == nil || !strings.Contains(err.Error(), "gateway.tls_cert") {
		t.Fatalf("a certificate given as its own key: %v, want an error naming gateway.tls_cert", err)
	}

	s, err := New(Config{Listen: "127.0.0.1:0", TLSCert: cert, TLSKey: key, Agents: agents}, Deps{Gate: realGate(t), Getenv: getenv, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodPost, "https://"+s.Addr()+"/v1/calls", strings.NewReader(`{"tool":"execute_command","args":{"command":"ls"}}`))
	req.Header.Set("Authorization", "Bearer tls-token-0123456789abcdef")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("HTTPS call: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	// Go's TLS server answers plain HTTP with a 400, never the API.
	if r, err := http.Get("http://" + s.Addr() + "/v1/calls"); err == nil {
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP to the TLS gateway: %d", r.StatusCode)
		}
	}
}
