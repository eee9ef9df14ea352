#include "util/expr.h"

#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>

namespace kf {
namespace {

// Recursive descent over the grammar
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := ('-' | '+') unary | primary
//   primary := INT | '(' expr ')' | FUNC '(' expr ',' expr ')' | NAME
//            | NAME '.' ('numel' | 'ndim' | 'shape' '[' expr ']')
// Every failure stops the parse: the first error is the one worth showing.
class Parser {
public:
    Parser(std::string_view text, const ExprEnv &env, const std::string &where)
        : m_text(text), m_env(env), m_where(where)
    {
    }

    Result<std::int64_t> run()
    {
        skipSpace();
        if (atEnd())
            return fail("empty expression");
        auto v = expr();
        if (m_error)
            return *m_error;
        skipSpace();
        if (!atEnd())
            return fail("unexpected " + tokenAt(m_pos) + " after a complete expression");
        return v;
    }

private:
    std::string_view m_text;
    const ExprEnv &m_env;
    const std::string &m_where;
    std::size_t m_pos = 0;
    std::optional<Error> m_error;

    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek() const { return atEnd() ? '\0' : m_text[m_pos]; }

    void skipSpace()
    {
        while (!atEnd() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }

    static bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
    static bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

    // The token starting at `pos`, quoted, for error messages.
    std::string tokenAt(std::size_t pos) const
    {
        if (pos >= m_text.size())
            return "end of expression";
        std::size_t end = pos + 1;
        if (isIdentChar(m_text[pos]))
            while (end < m_text.size() && isIdentChar(m_text[end]))
                ++end;
        return "\"" + std::string(m_text.substr(pos, end - pos)) + "\" at column " + std::to_string(pos + 1);
    }

    Error fail(const std::string &message)
    {
        if (!m_error)
            m_error = makeError(ErrorCode::Expr, message + " in \"" + std::string(m_text) + "\"", m_where);
        return *m_error;
    }

    // Returns 0 after recording an error; callers check m_error before using values.
    std::int64_t failValue(const std::string &message)
    {
        fail(message);
        return 0;
    }

    bool accept(char c)
    {
        skipSpace();
        if (peek() != c)
            return false;
        ++m_pos;
        return true;
    }

    bool expect(char c)
    {
        if (accept(c))
            return true;
        fail(std::string("expected '") + c + "' but found " + tokenAt(m_pos));
        return false;
    }

    std::int64_t expr()
    {
        std::int64_t v = term();
        while (!m_error) {
            skipSpace();
            char op = peek();
            if (op != '+' && op != '-')
                break;
            ++m_pos;
            std::int64_t r = term();
            if (m_error)
                break;
            std::int64_t out = 0;
            bool overflow = op == '+' ? __builtin_add_overflow(v, r, &out) : __builtin_sub_overflow(v, r, &out);
            if (overflow)
                return failValue("integer overflow");
            v = out;
        }
        return v;
    }

    std::int64_t term()
    {
        std::int64_t v = unary();
        while (!m_error) {
            skipSpace();
            char op = peek();
            if (op != '*' && op != '/' && op != '%')
                break;
            std::size_t opPos = m_pos++;
            std::int64_t r = unary();
            if (m_error)
                break;
            if (op == '*') {
                if (__builtin_mul_overflow(v, r, &v))
                    return failValue("integer overflow");
                continue;
            }
            if (r == 0)
                return failValue("division by zero at column " + std::to_string(opPos + 1));
            if (v == std::numeric_limits<std::int64_t>::min() && r == -1)
                return failValue("integer overflow");
            v = op == '/' ? v / r : v % r; // C semantics: truncation toward zero
        }
        return v;
    }

    std::int64_t unary()
    {
        skipSpace();
        if (accept('-')) {
            std::int64_t v = unary();
            if (m_error)
                return 0;
            if (v == std::numeric_limits<std::int64_t>::min())
                return failValue("integer overflow");
            return -v;
        }
        if (accept('+'))
            return unary();
        return primary();
    }

    std::int64_t primary()
    {
        skipSpace();
        char c = peek();
        if (c == '(') {
            ++m_pos;
            std::int64_t v = expr();
            if (m_error || !expect(')'))
                return 0;
            return v;
        }
        if (std::isdigit(static_cast<unsigned char>(c)))
            return literal();
        if (isIdentStart(c))
            return nameOrCall();
        return failValue("unexpected " + tokenAt(m_pos));
    }

    std::int64_t literal()
    {
        std::size_t start = m_pos;
        std::int64_t v = 0;
        while (!atEnd() && std::isdigit(static_cast<unsigned char>(peek()))) {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, peek() - '0', &v))
                return failValue("integer literal " + tokenAt(start) + " is too large");
            ++m_pos;
        }
        // "12abc" or "1.5" is a typo, not the number 12 followed by something.
        if (isIdentChar(peek()) || peek() == '.')
            return failValue("bad number " + tokenAt(start));
        return v;
    }

    std::string_view identifier()
    {
        std::size_t start = m_pos;
        while (!atEnd() && isIdentChar(peek()))
            ++m_pos;
        return m_text.substr(start, m_pos - start);
    }

    std::int64_t nameOrCall()
    {
        std::size_t start = m_pos;
        std::string_view name = identifier();
        skipSpace();
        if (peek() == '(')
            return call(name, start);
        if (peek() == '.')
            return tensorProperty(name, start);
        auto it = m_env.constants.find(name);
        if (it != m_env.constants.end())
            return it->second;
        if (m_env.shapes.count(name))
            return failValue("tensor " + tokenAt(start) + " needs .numel, .ndim or .shape[i]");
        return failValue("unknown constant " + tokenAt(start));
    }

    std::int64_t call(std::string_view name, std::size_t start)
    {
        if (name != "cdiv" && name != "min" && name != "max")
            return failValue("unknown function " + tokenAt(start) + " (known: cdiv, min, max)");
        ++m_pos; // '('
        std::int64_t a = expr();
        if (m_error || !expect(','))
            return 0;
        std::int64_t b = expr();
        if (m_error || !expect(')'))
            return 0;
        if (name == "min")
            return a < b ? a : b;
        if (name == "max")
            return a > b ? a : b;
        if (b == 0)
            return failValue("division by zero in cdiv");
        if (a == std::numeric_limits<std::int64_t>::min() && b == -1)
            return failValue("integer overflow");
        // Ceiling division that is also right for negative operands.
        std::int64_t q = a / b;
        if (a % b != 0 && ((a < 0) == (b < 0)))
            ++q;
        return q;
    }

    std::int64_t tensorProperty(std::string_view name, std::size_t start)
    {
        auto it = m_env.shapes.find(name);
        if (it == m_env.shapes.end())
            return failValue("unknown tensor " + tokenAt(start));
        const std::vector<std::int64_t> &shape = it->second;
        ++m_pos; // '.'
        skipSpace();
        std::size_t propPos = m_pos;
        std::string_view prop = identifier();
        if (prop == "numel") {
            std::int64_t n = 1;
            for (std::int64_t d : shape)
                if (__builtin_mul_overflow(n, d, &n))
                    return failValue("integer overflow");
            return n;
        }
        if (prop == "ndim")
            return static_cast<std::int64_t>(shape.size());
        if (prop == "shape") {
            if (!expect('['))
                return 0;
            std::size_t indexPos = m_pos;
            std::int64_t i = expr();
            if (m_error || !expect(']'))
                return 0;
            const auto ndim = static_cast<std::int64_t>(shape.size());
            std::int64_t j = i < 0 ? i + ndim : i;
            if (j < 0 || j >= ndim) {
                return failValue("index " + std::to_string(i) + " out of range for " + std::string(name) + " with " +
                                 std::to_string(ndim) + " dimensions (at column " + std::to_string(indexPos + 1) + ")");
            }
            return shape[static_cast<std::size_t>(j)];
        }
        return failValue("unknown tensor property " + tokenAt(propPos) + " (known: numel, ndim, shape[i])");
    }
};

} // namespace

Result<std::int64_t> evalExpr(std::string_view text, const ExprEnv &env, const std::string &where)
{
    return Parser(text, env, where).run();
}

} // namespace kf
