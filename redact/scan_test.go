package redact

import (
	"slices"
	"strings"
	"testing"
)

const (
	jwtIO = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ." +
		"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	// jweRFC7516 is the JWE of RFC 7516 appendix A.1.
	jweRFC7516 = "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ." +
		"OKOawDo13gRp2ojaHV7LFpZcgV7T6DVZKTyKOMTYUmKoTCVJRgckCL9kiMT03JGe" +
		"ipsEdY3mx_etLbbWSrFr05kLzcSr4qKAq7YN7e9jwQRb23nfa6c9d-StnImGyFDb" +
		"Sv04uVuxIp5Zms1gNxKKK2Da14B8S4rzVRltdYwam_lDp5XnZAYpQdb76FdIKLaV" +
		"mqgfwX7XWRxv2322i-vDxRfqNzo_tETKzpVLzfiwQyeyPGLBIO56YJ7eObdv0je8" +
		"1860ppamavo35UgoRdbYaBcoh9QcfylQr66oc6vFWXRcZ_ZT2LawVCWTIy3brGPi" +
		"6UklfCpIMfIjf7iGdXKHzg." +
		"48V1_ALb6US04U3b." +
		"5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6jiSdiwkIr3ajwQzaBtQD_A." +
		"XFBoMYUZodetZdvTiFvSkQ"
	certPEM = "-----BEGIN CERTIFICATE-----\n" +
		"MIIBszCCAVmgAwIBAgIUW1JOV1nqKsRZ4zEYrL0dhvMRDYwwCgYIKoZIzj0EAwIw\n" +
		"FjEUMBIGA1UEAwwLZXhhbXBsZS5jb20wHhcNMjYwMTAxMDAwMDAwWhcNMjcwMTAx\n" +
		"-----END CERTIFICATE-----"
	keyPEM = "-----BEGIN EC PRIVATE KEY-----\n" +
		"MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oYAzSYTpJwXHoAoGCCqGSM49\n" +
		"-----END EC PRIVATE KEY-----"
)

// scanKinds returns the kinds Scan reports in value, in order.
func scanKinds(field, value string) []Kind {
	var ks []Kind
	Scan(field, value, func(h Hit) {
		if h.Field != field {
			panic("hit in field " + h.Field + ", want " + field)
		}
		ks = append(ks, h.Kind)
	})
	return ks
}

var scanTests = []struct {
	value string
	want  []Kind
}{
	// MAC addresses.
	{"aa:bb:cc:dd:ee:ff", []Kind{MAC}},
	{"AA-BB-CC-DD-EE-FF", []Kind{MAC}},
	{"aabb.ccdd.eeff", []Kind{MAC}},
	{"AABB.CCDD.EEFF", []Kind{MAC}},
	{"dev-aa:bb:cc:dd:ee:ff", []Kind{MAC}},
	{"mac:aa:bb:cc:dd:ee:ff", []Kind{MAC}},
	{"sensor-00-1b-44-11-3a-b7", []Kind{MAC}},
	{"dev_3c:22:fb:01:02:03_eth0", []Kind{MAC}},
	{"lost aa:bb:cc:dd:ee:ff: refused", []Kind{MAC}},
	{"MAC aabb.ccdd.eeff.", []Kind{MAC}},
	{"(3c:22:fb:01:02:03)", []Kind{MAC}},
	{"12-11-30-14-17-34", []Kind{MAC}}, // a valid address, even if it reads as a date
	{"a aa:bb:cc:dd:ee:ff b 00:11:22:33:44:55", []Kind{MAC, MAC}},
	{"15:17:10", nil},
	{"2026-11-30T14:17:34.979964+00:00", nil},
	{"fe80::1", nil},
	{"fe80::aa:bb:cc:dd:ee:ff", nil},
	{"aa:bb:cc:dd:ee:ff::1", nil},
	{"2001:db8:aa:bb:cc:dd:ee:ff", nil},
	{"20:01:0d:b8:85:a3:00:12", nil}, // eight pairs
	{"aa:bb:cc:dd:ee:ff:00:11", nil}, // EUI-64
	{"cafe-aa-bb-cc-dd-ee-ff", nil},  // a seventh hex group
	{"xaa:bb:cc:dd:ee:ff", nil},
	{"aa:bb:cc:dd:ee:ffx", nil},
	{"aa:bb-cc:dd-ee:ff", nil},
	{"aa:bb:cc:dd:ee", nil},
	{"a:b:c:d:e:f", nil},
	{"aabbccddeeff", nil},
	{"00:00:00:00:00:00", nil}, // no device
	{"ff:ff:ff:ff:ff:ff", nil}, // broadcast
	{"01:00:5e:00:00:fb", nil}, // multicast
	{"0000.0000.0000", nil},
	{"123e4567-e89b-12d3-a456-426614174000", nil},
	{"1.4.2", nil},
	{"10.0.0.1", nil},
	{"1234.5678.9abc.1", nil},
	{"dev-0001", nil},

	// Bearer and Basic credentials.
	{"Bearer abcdEFGH12345678xyz", []Kind{Bearer}},
	{"Authorization: bearer 0123456789abcdef0123", []Kind{Bearer}},
	{"BEARER\tmF_9.B5f-4.1JqM", []Kind{Bearer}},
	{"Bearer " + jwtIO, []Kind{Bearer}},
	{"Bearer abcdEFGH12345678xyz== next", []Kind{Bearer}},
	{"Basic dXNlcjpwYXNz", []Kind{Bearer}},
	{"basic  dXNlcjpwYXNzd29yZA==", []Kind{Bearer}},
	{"Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", []Kind{Bearer}},
	{"Bearer", nil},
	{"Bearer token", nil},
	{"Bearer authentication required", nil},
	{"Bearer token-based-auth", nil},
	{"Bearer Internationalization", nil},
	{"the bearer of bad news", nil},
	{"xBearer abcdEFGH12345678xyz", nil},
	{"Bearer secret-0123456789abcdef", nil}, // a pseudonym
	{"Basic auth failed", nil},
	{"Basic", nil},
	{"basic connectivity check", nil},
	{"Basic SGVsbG8gd29ybGQ=", nil}, // "Hello world": no ':'
	{"Basic dXNlcjpwYXNz-x", nil},
	{"Basic dXNlcjpwYXNz=", nil}, // bad padding

	// PEM blocks.
	{certPEM, []Kind{PEM}},
	{keyPEM, []Kind{PEM}},
	{"cert=" + certPEM + " loaded", []Kind{PEM}},
	{strings.ReplaceAll(certPEM, "\n", " "), []Kind{PEM}},
	{strings.ReplaceAll(keyPEM, "\n", `\n`), []Kind{PEM}},
	{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq", []Kind{PEM}}, // cut short
	{"expected -----BEGIN CERTIFICATE----- in ca.pem", nil},
	{"-----END CERTIFICATE-----", nil},
	{"-----BEGIN CERTIFICATE----------END CERTIFICATE-----", nil},
	{"-----BEGIN CERTIFICATE-----\nshort\n-----END CERTIFICATE-----", nil},
	{"----- BEGIN CERTIFICATE -----\nMIIBszCCAVmgAwIBAgIUW1JOV1nqKsRZ4zEY", nil},

	// JWTs.
	{jwtIO, []Kind{JWT}},
	{"token=" + jwtIO + "; path=/", []Kind{JWT}},
	{"https://example.com/login/" + jwtIO, []Kind{JWT}},
	{"see " + jwtIO + ".", []Kind{JWT}},
	{"eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", []Kind{JWT}}, // unsecured
	{jweRFC7516, []Kind{JWT}},
	{"eyJhbGciOiJIUzI1NiJ9", nil},
	{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0", nil},
	{"eyJhbGciOiJIUzI1NiJ9..sig", nil},
	{jwtIO + ".more", nil}, // four segments
	{"x" + jwtIO, nil},
	{"a." + jwtIO, nil},
	{"eyJhbGc.eyJzdWIiOiIxIn0.c2ln", nil}, // header too short
	{"eyJhbGciOiJIUzI1NiJ9x.eyJzdWIiOiIxIn0.c2ln", nil},
	{"SGVsbG8gd29ybGQ=", nil},
	{"eyJ0eXAiOiJKV1QifQ==", nil},

	// URL passwords.
	{"mqtt://user:pw@broker:1883", []Kind{URLPassword}},
	{"mqtts://dev-1:s3cr3t@b.example.com", []Kind{URLPassword}},
	{"wss://u:p@h/mqtt", []Kind{URLPassword}},
	{"tcp://:pw@h", []Kind{URLPassword}},
	{"connect ssl://a:p@ss@host failed", []Kind{URLPassword}},
	{"http://u:pw@h?x=1", []Kind{URLPassword}},
	{"x-custom+scheme://u:pw@h", []Kind{URLPassword}},
	{"mqtt://broker:1883", nil},
	{"mqtt://user@host", nil},
	{"mqtt://user:@host", nil},
	{"http://host/path?email=a@b.com", nil},
	{"http://host:8080/x?u=a@b", nil},
	{"user:pw@host", nil},
	{"mqtt://u:secret-0123456789abcdef@h", nil}, // a pseudonym

	// Several.
	{"dev aa:bb:cc:dd:ee:ff via mqtt://u:p@h", []Kind{MAC, URLPassword}},
	{"mqtt://u:" + jwtIO + "@h", []Kind{URLPassword}},
	{"mqtt://aa-bb-cc-dd-ee-ff:pw@h", []Kind{MAC, URLPassword}},
	{"", nil},
	{"password", nil},
}

func TestScan(t *testing.T) {
	for _, tt := range scanTests {
		if got := scanKinds("v", tt.value); !slices.Equal(got, tt.want) {
			t.Errorf("Scan(%q) = %v, want %v", tt.value, got, tt.want)
		}
	}
}

func TestScanCredentialField(t *testing.T) {
	for _, tt := range []struct {
		field, value string
		want         []Kind
	}{
		{"password", "hunter2", []Kind{Password}},
		{"mqtt_password", "aa:bb:cc:dd:ee:ff", []Kind{Password}}, // the whole value, once
		{"mqtt_password", "", nil},
		{"api_key", "***", nil},
		{"token", "secret-0123456789abcdef", nil},
		{"client_id", "dev-0001", nil},
		{"client_id", "dev-aa:bb:cc:dd:ee:ff", []Kind{MAC}},
	} {
		if got := scanKinds(tt.field, tt.value); !slices.Equal(got, tt.want) {
			t.Errorf("Scan(%q, %q) = %v, want %v", tt.field, tt.value, got, tt.want)
		}
	}
}

func TestScanSpans(t *testing.T) {
	// The span is what a redactor replaces: exactly the secret part.
	for _, tt := range []struct{ value, want string }{
		{"dev-aa:bb:cc:dd:ee:ff", "aa:bb:cc:dd:ee:ff"},
		{"mqtt://user:pw@broker:1883", "pw"},
		{"connect ssl://a:p@ss@host failed", "p@ss"},
		{"Authorization: Bearer abcdEFGH12345678xyz==, x", "abcdEFGH12345678xyz=="},
		{"Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"},
		{"see " + jwtIO + ".", jwtIO},
		{"cert=" + certPEM + " loaded", certPEM},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq"},
		// Overlapping matches are one span: a MAC address that runs from
		// a URL's user into its password.
		{"mqtt://aa:bb:cc:dd:ee:ff:pw@h", "aa:bb:cc:dd:ee:ff:pw"},
	} {
		var got []string
		eachSpan(tt.value, func(sp span) { got = append(got, tt.value[sp.start:sp.end]) })
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("spans of %q = %q, want [%q]", tt.value, got, tt.want)
		}
	}
}

func TestScanDoesNotAllocate(t *testing.T) {
	fn := func(Hit) {}
	for _, v := range plainValues(64) {
		if n := testing.AllocsPerRun(10, func() { Scan("attempt_id", v, fn) }); n != 0 {
			t.Errorf("Scan(%q): %v allocations", v, n)
		}
	}
	if n := testing.AllocsPerRun(10, func() { ScanJSON("extra", `{"fw":"1.4.2","rssi":-71}`, fn) }); n != 0 {
		t.Errorf("ScanJSON: %v allocations", n)
	}
}

func TestKindString(t *testing.T) {
	want := []string{"Kind(0)", "password", "bearer token", "PEM block", "JWT", "URL password", "MAC address", "Kind(7)"}
	for k, w := range want {
		if got := Kind(k).String(); got != w {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, w)
		}
	}
}
