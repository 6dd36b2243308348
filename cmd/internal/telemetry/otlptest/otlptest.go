// Package otlptest is a fake OTLP/HTTP trace receiver for tests: an
// httptest server that takes what the real exporter sends to /v1/traces
// (a protobuf ExportTraceServiceRequest, the wire format collectors
// read, gzipped or not) and keeps the spans, flattened, and the requests'
// headers for a test to read. It can also refuse requests, as a receiver
// does, with a google.rpc.Status body. It imports the generated collector
// package (and so gRPC); only tests import otlptest.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, its ids in hex and its attributes (the
// span's and its resource's apart) as text.
type Span struct {
	Name              string
	TraceID, SpanID   string
	ParentID          string // "" for a root span
	Start, End        uint64 // Unix nanoseconds
	Attrs, Resource   map[string]string
	StatusError       bool
	StatusDescription string
}

// Receiver is the fake receiver.
type Receiver struct {
	srv  *httptest.Server
	path string

	mu      sync.Mutex
	spans   []Span
	headers []http.Header // each request's, in arrival order
	refuse  *refusal
	partial *coltracepb.ExportTracePartialSuccess
}

// refusal is the answer to every request while a test wants them refused.
type refusal struct {
	code    int
	message string
}

// New starts a receiver that takes spans at /v1/traces, closed when the
// test ends.
func New(tb testing.TB) *Receiver { return NewAt(tb, "/v1/traces") }

// NewAt starts a receiver that takes spans at path (and answers 404
// elsewhere), closed when the test ends.
func NewAt(tb testing.TB, path string) *Receiver {
	r := &Receiver{path: path}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(r.srv.Close)
	return r
}

// NewTLS starts a receiver at https://…/v1/traces whose certificate is
// signed by the CA in CertPEM, closed when the test ends.
func NewTLS(tb testing.TB) *Receiver {
	r := &Receiver{path: "/v1/traces"}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	tb.Cleanup(r.srv.Close)
	return r
}

// CertPEM is a TLS receiver's certificate (its own CA), as PEM.
func (r *Receiver) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
}

// Refuse makes the receiver answer every later request with code and a
// google.rpc.Status whose message is message, keeping no span; code 0
// takes spans again.
func (r *Receiver) Refuse(code int, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuse = nil
	if code != 0 {
		r.refuse = &refusal{code: code, message: message}
	}
}

// RejectSpans makes the receiver's later 2xx answers say that it rejected
// n spans, with message (OTLP's partial success); it still keeps them.
func (r *Receiver) RejectSpans(n int64, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial = &coltracepb.ExportTracePartialSuccess{RejectedSpans: n, ErrorMessage: message}
}

// Headers returns each request's headers, in arrival order.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// URL is the receiver's base URL (telemetry.otlp_endpoint); the spans go
// to its /v1/traces.
func (r *Receiver) URL() string { return r.srv.URL }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != r.path || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST "+r.path+" with application/x-protobuf", http.StatusNotFound)
		return
	}
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	refuse := r.refuse
	r.mu.Unlock()
	if refuse != nil {
		out, _ := proto.Marshal(&statuspb.Status{Code: 14, Message: refuse.message}) // 14: UNAVAILABLE
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(refuse.code)
		_, _ = w.Write(out)
		return
	}
	var in io.Reader = req.Body
	switch req.Header.Get("Content-Encoding") {
	case "":
	case "gzip":
		z, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, "gzip: "+err.Error(), http.StatusBadRequest)
			return
		}
		in = z
	default:
		http.Error(w, "unsupported Content-Encoding", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(in)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				got = append(got, Span{
					Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentID: hex.EncodeToString(s.ParentSpanId), Start: s.StartTimeUnixNano, End: s.EndTimeUnixNano,
					Attrs: attrs(s.Attributes), Resource: res,
					StatusError: s.GetStatus().GetCode() == 2, StatusDescription: s.GetStatus().GetMessage(),
				})
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	partial := r.partial
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: partial})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// attrs flattens attributes to text.
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = strconv.FormatBool(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			out[kv.Key] = strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
		default:
			out[kv.Key] = v.String()
		}
	}
	return out
}

// Spans returns the spans received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Named returns the received spans named name.
func (r *Receiver) Named(name string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}
