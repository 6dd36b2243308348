package shell

import "strings"

// HTTP clients through the shell (issue 25): curl, wget and HTTPie are
// judged as the http_request tool is, by the policy's own HTTP judge
// (Options.HTTP): the method their options give, each URL, and the
// headers. What that judge blocks or confirms (a metadata host however
// spelled, a secret manager's API, a raw scheme) is a danger here: the
// shell has no connect-time fence, and a person can still say yes to an
// ftp:// fetch. The clients are never readers: HTTP belongs to
// http_request. Uploads of files are the floors' (floors.go: -d @.env,
// -T, -F f=@key names a secret).

// HTTPRequest is one request a shell HTTP client makes, as the HTTP
// judge reads it.
type HTTPRequest struct {
	Method  string
	URL     string
	Headers map[string]string
	Body    bool // the request sends a body or a file
	// Files are the local files the request sends (-T FILE, -d @FILE,
	// -F f=@FILE, --post-file=FILE, HTTPie's f@FILE); "-" is standard
	// input, which the pipe rules judge.
	Files []string
}

// uploadOf returns the file a data or form value sends: @FILE, f=@FILE,
// f=<FILE; "" for inline data.
func uploadOf(v string) string {
	if rest, ok := strings.CutPrefix(v, "@"); ok {
		return rest
	}
	if k := strings.Index(v, "=@"); k >= 0 {
		f, _, _ := strings.Cut(v[k+2:], ";")
		return f
	}
	if k := strings.Index(v, "=<"); k >= 0 {
		f, _, _ := strings.Cut(v[k+2:], ";")
		return f
	}
	return ""
}

// curlValued are curl's options that take a value, so their value is not
// taken for a URL.
var curlValued = map[string]bool{"-X": true, "--request": true, "-H": true, "--header": true, "-d": true,
	"--data": true, "--data-raw": true, "--data-binary": true, "--data-urlencode": true, "--data-ascii": true,
	"--json": true, "-F": true, "--form": true, "--form-string": true, "-T": true, "--upload-file": true,
	"-o": true, "--output": true, "-u": true, "--user": true, "-A": true, "--user-agent": true, "-e": true,
	"--referer": true, "-b": true, "--cookie": true, "-c": true, "--cookie-jar": true, "-m": true,
	"--max-time": true, "--connect-timeout": true, "-w": true, "--write-out": true, "-x": true, "--proxy": true,
	"--resolve": true, "--connect-to": true, "--cacert": true, "--cert": true, "-E": true, "--key": true,
	"--url": true, "-r": true, "--range": true, "-K": true, "--config": true, "--retry": true, "-y": true,
	"-Y": true, "--limit-rate": true, "--interface": true, "--dns-servers": true, "-U": true, "--proxy-user": true}

// httpRequests reads the requests of a curl, wget or HTTPie command line.
func httpRequests(name string, args []arg) []HTTPRequest {
	switch name {
	case "curl", "curlie":
		return curlRequests(args)
	case "wget":
		return wgetRequests(args)
	case "http", "https", "xh", "xhs", "httpie":
		return httpieRequests(name, args)
	}
	return nil
}

func curlRequests(args []arg) []HTTPRequest {
	method, get, body := "", false, false
	var files []string
	headers := map[string]string{}
	var urls []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dynamic {
			continue
		}
		t := a.text
		name, val, eq := t, "", false
		if strings.HasPrefix(t, "--") {
			name, val, eq = strings.Cut(t, "=")
		} else if strings.HasPrefix(t, "-") && len(t) > 2 && curlValued[t[:2]] {
			name, val, eq = t[:2], t[2:], true // -XPOST, -HName:v
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			if strings.Contains(t, "://") {
				urls = append(urls, t)
			}
			continue
		}
		if curlValued[name] && !eq && i+1 < len(args) {
			i++
			val = args[i].text
		}
		switch name {
		case "-X", "--request":
			method = strings.ToUpper(val)
		case "-I", "--head":
			method = "HEAD"
		case "-G", "--get":
			get = true
		case "-d", "--data", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "-F", "--form":
			body = true
			if f := uploadOf(val); f != "" {
				files = append(files, f)
			}
		case "--data-raw", "--form-string":
			body = true
		case "-T", "--upload-file":
			body = true
			files = append(files, val)
			if method == "" {
				method = "PUT"
			}
		case "-H", "--header":
			if k, v, ok := strings.Cut(val, ":"); ok {
				headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		case "--url":
			urls = append(urls, val)
		}
	}
	if method == "" {
		switch {
		case body && !get:
			method = "POST"
		default:
			method = "GET"
		}
	}
	return requests(method, urls, headers, body && !get, files)
}

func wgetRequests(args []arg) []HTTPRequest {
	method, body := "", false
	var files []string
	headers := map[string]string{}
	var urls []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dynamic {
			continue
		}
		t := a.text
		if !strings.HasPrefix(t, "-") {
			if strings.Contains(t, "://") {
				urls = append(urls, t)
			}
			continue
		}
		name, val, eq := strings.Cut(t, "=")
		if !eq && in(name, "--method", "--header", "--post-data", "--post-file", "--body-data", "--body-file") && i+1 < len(args) {
			i++
			val = args[i].text
		}
		switch name {
		case "--method":
			method = strings.ToUpper(val)
		case "--post-data", "--post-file":
			body = true
			if method == "" {
				method = "POST"
			}
			if name == "--post-file" {
				files = append(files, val)
			}
		case "--body-data", "--body-file":
			body = true
			if name == "--body-file" {
				files = append(files, val)
			}
		case "--header":
			if k, v, ok := strings.Cut(val, ":"); ok {
				headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		case "--spider":
			if method == "" {
				method = "HEAD"
			}
		}
	}
	if method == "" {
		method = "GET"
	}
	return requests(method, urls, headers, body, files)
}

// httpMethods are the methods HTTPie takes as its first operand.
var httpMethods = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "POST": true, "PUT": true,
	"PATCH": true, "DELETE": true, "TRACE": true, "CONNECT": true}

func httpieRequests(name string, args []arg) []HTTPRequest {
	method, url, body := "", "", false
	var files []string
	headers := map[string]string{}
	for _, a := range args {
		t := a.text
		if a.dynamic || strings.HasPrefix(t, "-") {
			continue
		}
		switch {
		case method == "" && url == "" && httpMethods[t]:
			method = t
		case url == "":
			url = t
		default:
			// Items: Header:value, field=value, field:=json, field@file.
			k := strings.IndexAny(t, ":=@")
			if k < 0 {
				continue
			}
			switch {
			case t[k] == '@':
				body = true
				files = append(files, t[k+1:])
			case strings.HasPrefix(t[k:], ":=@") || strings.HasPrefix(t[k:], "=@"):
				body = true
				files = append(files, strings.TrimLeft(t[k:], ":=@"))
			case strings.HasPrefix(t[k:], ":=") || t[k] == '=':
				body = true
			case t[k] == ':':
				headers[t[:k]] = t[k+1:]
			}
		}
	}
	if url == "" {
		return nil
	}
	if !strings.Contains(url, "://") {
		scheme := "http://"
		if name == "https" || name == "xhs" {
			scheme = "https://"
		}
		if strings.HasPrefix(url, ":") {
			url = "localhost" + url
		}
		url = scheme + url
	}
	if method == "" {
		method = "GET"
		if body {
			method = "POST"
		}
	}
	return requests(method, []string{url}, headers, body, files)
}

func requests(method string, urls []string, headers map[string]string, body bool, files []string) []HTTPRequest {
	out := make([]HTTPRequest, 0, len(urls))
	for _, u := range urls {
		out = append(out, HTTPRequest{Method: method, URL: u, Headers: headers, Body: body, Files: files})
	}
	return out
}

// httpJudged judges the requests of a shell HTTP client by the policy's
// HTTP judge; it reports whether that found a danger.
func (j *judge) httpJudged(shown, name string, args []arg) bool {
	found := false
	for _, r := range httpRequests(name, args) {
		for _, f := range r.Files {
			if f != "" && f != "-" && f != "/dev/stdin" {
				// A file next to a network endpoint: it leaves the machine.
				j.danger(shown + " sends the local file " + clipWord(f) + " to " + clipWord(r.URL))
				found = true
				break
			}
		}
		if j.a.http == nil {
			continue
		}
		for _, why := range j.a.http(r) {
			j.danger(shown + " " + clipWord(r.URL) + ", judged as http_request: " + why)
			found = true
		}
	}
	return found
}
