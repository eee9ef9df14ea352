#pragma once
// Base URLs of model servers, taken apart just enough to decide where a key may go and to keep
// credentials written into a URL ("https://user:pass@host/v1", "...?api-key=...") out of
// everything that is stored or printed.
#include <string>
#include <vector>

namespace kf::llm {

struct Url {
    std::string scheme;   // "https", lower case
    std::string userinfo; // "user:pass" before the '@', usually empty
    std::string host;     // "api.openai.com", "127.0.0.1", "::1" (no brackets), lower case
    std::string port;     // "8000", or empty
    std::string path;     // "/v1", no trailing '/'
    std::string query;    // "api-version=2024-10-21&api-key=...", without the '?'

    // The URL of `sub` ("/chat/completions") below this one, the query kept at the end.
    std::string join(const std::string &sub) const;
    std::string authority() const; // "host:port", IPv6 in brackets, no credentials
};

// Parses "scheme://[userinfo@]host[:port][/path][?query]"; false when there is no scheme or host.
bool parseUrl(const std::string &text, Url &out);

// localhost, 127.0.0.0/8 and ::1: hosts where plain HTTP never leaves the machine.
bool isLoopback(const std::string &host);

// The URL without credentials: no userinfo, and no query parameter whose name says it carries a
// secret (key, token, secret, password, signature, auth, ...). What sessions, logs and messages show.
std::string publicUrl(const std::string &text);

// Whether the URL carries credentials that publicUrl() leaves out.
bool hasCredentials(const std::string &text);

// The credential values in a URL (the password, the values of secret query parameters), so that
// they can be scrubbed from what a server echoes back.
std::vector<std::string> urlSecrets(const std::string &text);

} // namespace kf::llm
