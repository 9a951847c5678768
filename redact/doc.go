// Package redact finds credentials and permanent hardware identifiers in
// the values of audit records, and replaces them with consistent
// pseudonyms.
//
// Audit records travel to shared storage and into after-action reports,
// which must carry neither a device's credentials nor its permanent
// network identifiers. [Scan] and [ScanJSON] report where such values are
// (the secret-in-log rule); a [Redactor] replaces them (export --redact,
// report --redact). A [Hit] names the field and the kind of a value, never
// the value.
//
// # Kinds
//
// A value is found by the name it is under (the key rule, below) or by
// its shape. The shapes are exact; what they deliberately do not match is
// said with each.
//
// [Password] is a credential found by its name: the whole value of a
// field or member whose name is a credential key. Under such a name, any
// JSON value is a credential (a number, an object) except null, true,
// false, "", {} and [] (a bit at most), a string of asterisks ("***",
// already masked) and a pseudonym.
//
// [Bearer] is an HTTP Authorization credential: the word "Bearer" or
// "Basic", in any case and not inside a longer word, then one or more
// spaces or tabs, then the credential, which is what is replaced:
//   - after Bearer, an RFC 7235 token68 (letters, digits, "-._~+/", then
//     '=' padding) of at least 12 characters before its padding, with two
//     or more of: a digit, a lower-case letter, an upper-case letter after
//     its first character (RFC 6750's "mF_9.B5f-4.1JqM" is a token;
//     "Bearer authentication", "Bearer token-based-auth" and "Bearer
//     Internationalization" are words);
//   - after Basic, standard base64 (padded to a multiple of 4, or not
//     padded) that decodes to bytes with a ':', as user:password does
//     ("Basic auth" is a word).
//
// The credential must end where the token68 alphabet ends: "Basic
// dXNlcjpwYXNz-x" is no credential.
//
// [PEM] is a PEM block: "-----BEGIN LABEL-----", LABEL being up to 64
// printable ASCII characters, through the first "-----END " line after
// it (and before another BEGIN line) if that is "-----END LABEL-----"
// with the same label, provided the
// text between has a run of at least 16 base64 characters (a certificate as well as a key: a device's
// certificate identifies it). Without such an end line, as in a value
// cut short, the block runs from the BEGIN line over the body that
// follows it (base64 characters, white space and backslashes, for a body
// written with literal "\n") to the body's last base64 character, if the
// body has such a run. A marker in a sentence ("expected -----BEGIN
// CERTIFICATE----- in ca.pem") is not a block, nor is an END line alone.
//
// [JWT] is a JSON Web Token in compact form: a run of base64url
// characters (letters, digits, '-', '_') and dots, not after a letter,
// digit, '_' or '.', starting "eyJ" (the base64url of `{"`, a JSON
// header's start), with 3 segments (a JWS: header, a non-empty payload, a
// signature, empty only for an unsecured token) or 5 (a JWE: its last
// three not empty). The header has at least 12 characters and no segment
// is 1 more than a multiple of 4 long, which no base64 is. A single dot
// ending the run is punctuation when the run is a token without it.
// "eyJhbGciOiJIUzI1NiJ9" alone is no token, nor is a run of 2, 4, or
// more than 5 segments, nor standard base64 ('+', '/', '=').
//
// [URLPassword] is the password in a URL's userinfo: "://", then the
// authority (up to the first '/', '?', '#', backslash, '"', '<', '>',
// white space or control character), then in the part before its last
// '@' a ':' and at least one character, which are the password. The
// scheme is not examined: mqtt, mqtts, ws, wss, tcp, ssl, http(s) and any
// other are alike. "mqtt://broker:1883" and "mqtt://user@host" have no
// password. A password with an unencoded '/', '?' or '#' ends the
// authority early and is not found; one with an unencoded '@' is, up to
// its last '@'.
//
// [MAC] is an EUI-48 hardware address: six hex pairs joined by ':' or by
// '-' (one of them throughout: aa:bb:cc:dd:ee:ff, AA-BB-CC-DD-EE-FF), or
// three hex quads joined by '.' (Cisco's aabb.ccdd.eeff). It must stand on
// its own at both ends: next to it is the edge of the value, or a byte
// that is neither a letter, a digit nor its separator, or its separator
// followed by a word (letters and digits, not all hex: "dev-", "mac:") or
// by a byte that is neither the separator, a letter nor a digit ("ff: ").
// So "dev-aa:bb:cc:dd:ee:ff" and "mac:aa:bb:cc:dd:ee:ff" match, but not
// the pairs of a longer run: timestamps (15:17:10), IPv6 addresses
// ("fe80::aa:bb:cc:dd:ee:ff", eight 2-digit groups), EUI-64, a bare
// "aabbccddeeff". Addresses that name no device are not reported: the
// all-zero address, and group addresses (the low bit of the first octet
// set: multicast and the broadcast ff:ff:ff:ff:ff:ff). Six 2-digit
// decimal groups (12-11-30-14-17-34) do match: they are a valid address.
//
// Matches that overlap are one span, their union, of the kind of the one
// that starts first (the longer if two start together, then in the order
// PEM, Bearer, URL password, JWT, MAC): "Bearer eyJ…" is a Bearer token,
// and a password that is a JWT is a URL password.
//
// # The key rule
//
// A name is a credential key (IsCredentialKey) when, split into words,
// what is left after dropping the qualifier words at its end ends with a
// credential word or pair:
//   - words are the runs of ASCII letters and digits, also split where a
//     lower-case letter or a digit is followed by an upper-case one
//     (mqttPassword) and before the last of several upper-case letters
//     followed by a lower-case one (APIKey, MQTTPassword); case is
//     ignored; a JSON member name is split after unescaping, so
//     "pass\u0077ord" is "password";
//   - qualifiers say how a credential is written, not what it is: hash,
//     hashed, digest, enc, encrypted, encoded, b64, base64, hex, value,
//     raw, plain, plaintext, cleartext, str, string, old, new, current,
//     confirm, confirmation, md5, sha1, sha256, sha512, bcrypt (a
//     password_hash can be cracked offline);
//   - the last word, without trailing digits (password2) unless it is all
//     digits, and without one plural 's', ends with password, passwd,
//     passphrase, pwd, secret, token, apikey, privatekey, secretkey,
//     accesskey, credential, authorization, authorisation or psk
//     (mqttpassword, clientsecret and accesstoken are one word), or is
//     pass, creds or bearer;
//   - or the last word is key or keys and the one before it is api,
//     private, secret, access, shared, signing, encryption or master.
//
// So password, passwd, pwd, pass, secret, client_secret, token,
// access_token, refresh_token, auth_token, api_key, apikey, api-key,
// x-api-key, private_key, credentials, authorization, mqtt_password,
// password_hash, MQTT_PASSWORD and clientSecret are credential keys;
// token_type, token_expires_in, password_changed_at, password_set,
// secret_name, key, bypass and pass_count are not. Plain fields have
// their name tested too (Scan("password", v)), and so does the root of a
// JSON value (its field name).
//
// # JSON
//
// ScanJSON and Redactor.JSON read the text as strictly as json.Valid
// does (RFC 8259, nesting up to 10,000 deep); a text that is not valid is
// a plain string to them, for Scan and Redactor.String. Every member
// name and every string value, unescaped, is scanned for the shapes
// above; a credential member's value is not looked into. A hit's Field is
// its path: the field name, then ".NAME" for each member (unescaped, or
// "*" when the name itself has a match, which a path must not repeat) and
// "[]" for each array element, as in "extra.mqtt.password",
// "extra.brokers[].url" and "extra.devices.*". Paths are for showing and
// counting, not for addressing: a name may hold a '.'. A path longer than
// 256 bytes is cut there (at a character boundary) and ends in "…", so a
// hostile text cannot make each of many hits carry a path as long as
// itself.
//
// # Pseudonyms
//
// A value is replaced by its pseudonym: a prefix, '-', and 16 lower-case
// hex digits, the first 8 bytes of HMAC-SHA256(key, prefix || 0x00 ||
// value). The prefix is "secret" for passwords, Bearer credentials and URL
// passwords, which share it, so a token is one pseudonym under
// "access_token" and after "Bearer "; it is "pem", "jwt" and "mac" for the
// others. A MAC address is hashed as its 6 bytes, so its spellings
// (aa:bb:…, AA-BB-…, aabb.ccdd.eeff) are one pseudonym; a string
// credential as its unescaped contents; any other JSON credential as its
// compact JSON text. Without the key, a pseudonym cannot be reversed nor
// a guessed value confirmed: an unkeyed hash of a MAC address would fall
// to trying the 2^24 addresses of its vendor's prefix.
//
// In a plain field only the matched span is replaced ("dev-aa:bb:cc:dd:ee:ff"
// becomes "dev-mac-…"; a URL keeps its user and host; "Bearer " stays);
// under a credential key the whole value is, and in JSON it becomes a
// string. A value that is exactly a pseudonym is never reported, so
// redacting twice changes nothing. Rarely a pseudonym completes a match
// that was not there (a Bearer token that now runs into the text after a
// replaced address); the Redactor then replaces again, so its output has
// no hit, and counts that replacement too (a value that would still have
// one after 4 rounds is replaced whole, as a Password). Its counts can
// thus exceed the hits Scan reports.
//
// # Cost
//
// Scan and ScanJSON are called on every string of millions of records. A
// prefilter, one pass over the bytes, rules out the shapes whose marks
// (white space, "://", "eyJ", "--", separators at a MAC's distances) a
// value lacks. Neither function allocates unless it reports a hit (or, in
// JSON, meets a string with escapes), and a Redactor returns a value with
// nothing to replace as it is, without allocating. Every search is linear
// in the value's length, whatever the value.
package redact
