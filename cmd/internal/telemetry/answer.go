package telemetry

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// protobufType is OTLP/HTTP's binary protobuf content type, of requests
// and answers.
const protobufType = "application/x-protobuf"

// refused is the error of a receiver's non-2xx answer: its status, and the
// message of the google.rpc.Status that OTLP/HTTP puts in the body (or a
// plain text body's first line) when there is one.
func refused(resp *http.Response, body []byte) error {
	if msg := answerMessage(resp.Header.Get("Content-Type"), body); msg != "" {
		return fmt.Errorf("the OTLP receiver answered %s: %s", resp.Status, msg)
	}
	return fmt.Errorf("the OTLP receiver answered %s", resp.Status)
}

// answerMessage is the message in an error answer's body, "" if none.
// google.rpc.Status is { int32 code = 1; string message = 2; repeated Any details = 3; }.
func answerMessage(contentType string, body []byte) string {
	var msg string
	switch mediaType(contentType) {
	case protobufType:
		fields(body, func(num protowire.Number, _ uint64, b []byte) {
			if num == 2 {
				msg = string(b)
			}
		})
	case "application/json":
		var st struct{ Message string }
		_ = json.Unmarshal(body, &st) // not a Status: no message
		msg = st.Message
	case "text/plain":
		msg, _, _ = strings.Cut(string(body), "\n")
	}
	msg = strings.TrimSpace(msg)
	if !utf8.ValidString(msg) {
		return ""
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// partialSuccess reads a 2xx answer's ExportTraceServiceResponse:
// { ExportTracePartialSuccess partial_success = 1; } with
// { int64 rejected_spans = 1; string error_message = 2; }. Zero and ""
// when the receiver took everything (or said nothing we can read).
func partialSuccess(contentType string, body []byte) (rejected int64, msg string) {
	if mediaType(contentType) != protobufType {
		return 0, ""
	}
	fields(body, func(num protowire.Number, _ uint64, b []byte) {
		if num != 1 {
			return
		}
		fields(b, func(num protowire.Number, v uint64, b []byte) {
			switch num {
			case 1:
				rejected = int64(v)
			case 2:
				msg = string(b)
			}
		})
	})
	return rejected, msg
}

// mediaType is a Content-Type without its parameters, "" if unreadable.
func mediaType(contentType string) string {
	t, _, _ := mime.ParseMediaType(contentType)
	return t
}

// fields calls fn with each varint and length-delimited field of the
// protobuf message b (other wire types are skipped), and stops at the
// first malformed byte: an answer is read as far as it makes sense.
func fields(b []byte, fn func(num protowire.Number, v uint64, bytes []byte)) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return
			}
			fn(num, v, nil)
			n = m
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return
			}
			fn(num, 0, v)
			n = m
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return
			}
		}
		b = b[n:]
	}
}
