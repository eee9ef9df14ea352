#include "gen/llm/url.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kf::llm {

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// Query parameters whose names say they carry a secret: "api-key", "api_key", "key", "token",
// "access_token", "sig" (signed URLs), "code" (function keys), "password", ...
bool secretParameter(const std::string &name)
{
    const std::string n = lower(name);
    for (const char *word : {"key", "token", "secret", "pass", "auth", "sig", "credential", "code"})
        if (n.find(word) != std::string::npos)
            return true;
    return false;
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, sep))
        out.push_back(part);
    return out;
}

// Shorter values are not worth scrubbing: replacing every "abc" in an answer would garble it.
constexpr std::size_t kMinSecret = 8;

} // namespace

bool parseUrl(const std::string &text, Url &out)
{
    out = Url{};
    const auto scheme = text.find("://");
    if (scheme == std::string::npos || scheme == 0)
        return false;
    out.scheme = lower(text.substr(0, scheme));
    std::string rest = text.substr(scheme + 3);
    const auto q = rest.find('?');
    if (q != std::string::npos) {
        out.query = rest.substr(q + 1);
        rest.erase(q);
    }
    if (auto hash = out.query.find('#'); hash != std::string::npos)
        out.query.erase(hash);
    const auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    out.path = slash == std::string::npos ? std::string() : rest.substr(slash);
    while (!out.path.empty() && out.path.back() == '/')
        out.path.pop_back();
    if (auto at = authority.rfind('@'); at != std::string::npos) {
        out.userinfo = authority.substr(0, at);
        authority.erase(0, at + 1);
    }
    if (!authority.empty() && authority.front() == '[') { // [::1]:8000
        const auto close = authority.find(']');
        if (close == std::string::npos)
            return false;
        out.host = authority.substr(1, close - 1);
        if (close + 1 < authority.size() && authority[close + 1] == ':')
            out.port = authority.substr(close + 2);
    } else {
        const auto colon = authority.rfind(':');
        out.host = authority.substr(0, colon);
        if (colon != std::string::npos)
            out.port = authority.substr(colon + 1);
    }
    out.host = lower(out.host);
    return !out.host.empty();
}

std::string Url::authority() const
{
    const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return port.empty() ? h : h + ":" + port;
}

std::string Url::join(const std::string &sub) const
{
    const std::string user = userinfo.empty() ? std::string() : userinfo + "@";
    return scheme + "://" + user + authority() + path + sub + (query.empty() ? "" : "?" + query);
}

bool isLoopback(const std::string &host)
{
    const std::string h = lower(host);
    if (h == "localhost" || h == "::1" || (h.size() > 10 && h.compare(h.size() - 10, 10, ".localhost") == 0))
        return true;
    // 127.0.0.0/8, written as a dotted quad.
    const auto parts = split(h, '.');
    if (parts.size() != 4 || parts[0] != "127")
        return false;
    return std::all_of(parts.begin(), parts.end(), [](const std::string &p) {
        return !p.empty() && p.size() <= 3 && std::all_of(p.begin(), p.end(), ::isdigit) && std::stoi(p) <= 255;
    });
}

std::string publicUrl(const std::string &text)
{
    Url u;
    if (!parseUrl(text, u))
        return text;
    u.userinfo.clear();
    std::string kept;
    for (const std::string &param : split(u.query, '&'))
        if (!param.empty() && !secretParameter(param.substr(0, param.find('='))))
            kept += (kept.empty() ? "" : "&") + param;
    u.query = kept;
    return u.join("");
}

bool hasCredentials(const std::string &text)
{
    Url u;
    if (!parseUrl(text, u))
        return false;
    if (!u.userinfo.empty())
        return true;
    const auto params = split(u.query, '&');
    return std::any_of(params.begin(), params.end(),
                       [](const std::string &p) { return secretParameter(p.substr(0, p.find('='))); });
}

std::vector<std::string> urlSecrets(const std::string &text)
{
    std::vector<std::string> out;
    Url u;
    if (!parseUrl(text, u))
        return out;
    auto keep = [&](const std::string &v) {
        if (v.size() >= kMinSecret)
            out.push_back(v);
    };
    if (!u.userinfo.empty()) {
        const auto colon = u.userinfo.find(':');
        keep(u.userinfo.substr(0, colon));
        if (colon != std::string::npos)
            keep(u.userinfo.substr(colon + 1));
    }
    for (const std::string &param : split(u.query, '&')) {
        const auto eq = param.find('=');
        if (eq != std::string::npos && secretParameter(param.substr(0, eq)))
            keep(param.substr(eq + 1));
    }
    return out;
}

} // namespace kf::llm
