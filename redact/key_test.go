package redact

import "testing"

func TestIsCredentialKey(t *testing.T) {
	yes := []string{
		// The words of the rule.
		"password", "passwd", "pwd", "pass", "passphrase", "secret",
		"client_secret", "token", "access_token", "refresh_token",
		"auth_token", "api_key", "apikey", "api-key", "private_key",
		"credentials", "credential", "creds", "authorization", "psk",
		"bearer",
		// Case, separators, camelCase, compounds.
		"PASSWORD", "Password", "MQTT_PASSWORD", "mqtt_password",
		"mqtt.password", "mqtt password", "mqttPassword", "MQTTPassword",
		"mqttpassword", "clientSecret", "clientsecret", "accessToken",
		"APIKey", "apiKey", "x-api-key", "X-Api-Key", "privateKey",
		"aws_secret_access_key", "access_key", "signing_key",
		"Proxy-Authorization", "wifi_psk", "wpapsk", "sas_token",
		// Qualifiers after the credential.
		"password_hash", "passwordHash", "password_sha256", "token_value",
		"secret_b64", "password_confirm", "password_old",
		// Digits and plurals.
		"password2", "Token1", "passwords", "tokens", "api_keys",
	}
	no := []string{
		"", "_", "key", "keys", "id", "client_id", "attempt_id", "record_id",
		"host_id", "token_type", "token_expires_in", "token_id",
		"password_changed_at", "password_set", "password_policy",
		"passwordless", "secret_name", "secretName", "pass_count",
		"bypass", "compass", "passive", "tokenizer", "author", "auth",
		"auth_method", "keyboard", "monkey", "public_key", "key_id",
		"hash", "password_hash_id", "token_2", "secret-0123456789012345",
		"pässword",
	}
	for _, name := range yes {
		if !IsCredentialKey(name) {
			t.Errorf("IsCredentialKey(%q) = false, want true", name)
		}
	}
	for _, name := range no {
		if IsCredentialKey(name) {
			t.Errorf("IsCredentialKey(%q) = true, want false", name)
		}
	}
}

func TestLastWord(t *testing.T) {
	for _, tt := range []struct {
		name string
		want []string // from the last
	}{
		{"mqttPassword", []string{"Password", "mqtt"}},
		{"MQTTPassword", []string{"Password", "MQTT"}},
		{"APIKey", []string{"Key", "API"}},
		{"x-api-key", []string{"key", "api", "x"}},
		{"v2Token", []string{"Token", "v2"}},
		{"password2Hash", []string{"Hash", "password2"}},
		{"PASSWORD", []string{"PASSWORD"}},
		{"__a__", []string{"a"}},
	} {
		var got []string
		for w, end := lastWord(tt.name, len(tt.name)); w != ""; w, end = lastWord(tt.name, end) {
			got = append(got, w)
		}
		if len(got) != len(tt.want) {
			t.Errorf("words of %q = %q, want %q", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("words of %q = %q, want %q", tt.name, got, tt.want)
				break
			}
		}
	}
}
