package redact

import "strconv"

// Kind is what a found value looks like.
type Kind uint8

// The kinds, in the order Replaced sorts them. The package documentation
// defines each.
const (
	Password    Kind = iota + 1 // the value of a credential member or field
	Bearer                      // an HTTP Authorization credential (Bearer or Basic)
	PEM                         // a PEM block
	JWT                         // a JSON Web Token (JWS or JWE compact)
	URLPassword                 // the password of a URL's userinfo
	MAC                         // a hardware (EUI-48) MAC address
)

const numKinds = int(MAC) + 1

var kindNames = [numKinds]string{
	Password:    "password",
	Bearer:      "bearer token",
	PEM:         "PEM block",
	JWT:         "JWT",
	URLPassword: "URL password",
	MAC:         "MAC address",
}

// String returns the kind's name as a finding or a report shows it:
// "password", "bearer token", "PEM block", "JWT", "URL password" or
// "MAC address".
func (k Kind) String() string {
	if k == 0 || int(k) >= numKinds {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// prefix is the pseudonym prefix of the kind: the class its values are
// hashed in. The three credential kinds share one class, so a token under
// "access_token" and the same token after "Bearer " get one pseudonym.
func (k Kind) prefix() string {
	switch k {
	case PEM:
		return "pem"
	case JWT:
		return "jwt"
	case MAC:
		return "mac"
	}
	return "secret"
}

// A Hit is one value found: the field it was in and what it looks like.
// It never holds the value.
type Hit struct {
	// Field is the path of the value: the field name given to Scan, or for
	// ScanJSON the field name, then ".NAME" for each member and "[]" for
	// each array element on the way down (see the package documentation).
	Field string
	Kind  Kind
}
