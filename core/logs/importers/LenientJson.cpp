#include "LenientJson.h"

#include <QJsonArray>
#include <QJsonObject>

#include <charconv>
#include <cmath>
#include <limits>

namespace ty {

std::optional<double> parseDecimal(std::string_view text)
{
    const char* const b = text.data();
    const char* const e = b + text.size();
    double d = 0;
    const auto [ptr, ec] = std::from_chars(b, e, d);
    if (ptr != e || (ec != std::errc() && ec != std::errc::result_out_of_range))
        return std::nullopt;
    if (ec == std::errc())
        return d;
    // Out of range, which way? The decimal exponent of the first non-zero
    // digit decides: >= 0 overflows (+-inf), < 0 underflows (+-0), as
    // Python's float() rounds. (`0.` + 400 zeros + `1` has no `e-` at all.)
    const char* p = b;
    const bool neg = *p == '-';
    if (neg || *p == '+')
        ++p;
    qint64 firstDigitExp = 0;
    bool seen = false;
    qint64 intDigits = 0;
    for (; p < e && *p >= '0' && *p <= '9'; ++p) {
        if (seen || *p != '0') {
            seen = true;
            ++intDigits;
        }
    }
    if (seen) {
        firstDigitExp = intDigits - 1;
    } else if (p < e && *p == '.') {
        qint64 k = 0;
        for (++p; p < e && *p >= '0' && *p <= '9'; ++p) {
            ++k;
            if (*p != '0') {
                seen = true;
                firstDigitExp = -k;
                break;
            }
        }
    }
    while (p < e && *p != 'e' && *p != 'E')
        ++p;
    qint64 exp = 0;
    if (p < e) {
        ++p;
        const bool negExp = p < e && *p == '-';
        if (p < e && (*p == '-' || *p == '+'))
            ++p;
        for (; p < e; ++p)
            exp = std::min<qint64>(exp * 10 + (*p - '0'), qint64(1) << 40); // saturates: only the sign matters
        if (negExp)
            exp = -exp;
    }
    if (!seen || firstDigitExp + exp < 0)
        return neg ? -0.0 : 0.0;
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

namespace {

class Parser {
public:
    Parser(QByteArrayView text, int maxDepth)
        : m_p(text.data())
        , m_begin(text.data())
        , m_end(text.data() + text.size())
        , m_maxDepth(maxDepth)
    { }

    Result<QJsonValue> parseDocument()
    {
        skipWs();
        QJsonValue v = value(0);
        if (!m_error.isEmpty())
            return fail(m_error);
        skipWs();
        if (m_p != m_end)
            return fail(QStringLiteral("byte %1: unexpected data after the JSON value").arg(m_p - m_begin));
        return v;
    }

private:
    QJsonValue bad(const QString& what)
    {
        if (m_error.isEmpty())
            m_error = QStringLiteral("byte %1: %2").arg(m_p - m_begin).arg(what);
        m_p = m_end;
        return QJsonValue();
    }

    void skipWs()
    {
        while (m_p < m_end && (*m_p == ' ' || *m_p == '\t' || *m_p == '\n' || *m_p == '\r'))
            ++m_p;
    }

    bool literal(const char* word)
    {
        const char* q = m_p;
        for (const char* w = word; *w; ++w, ++q) {
            if (q >= m_end || *q != *w)
                return false;
        }
        m_p = q;
        return true;
    }

    QJsonValue value(int depth)
    {
        if (m_p >= m_end)
            return bad(QStringLiteral("unexpected end of input, expected a value"));
        switch (*m_p) {
        case '{': return object(depth + 1);
        case '[': return array(depth + 1);
        case '"': {
            QString s;
            if (!string(s))
                return QJsonValue();
            return QJsonValue(s);
        }
        case 't':
            if (literal("true"))
                return QJsonValue(true);
            break;
        case 'f':
            if (literal("false"))
                return QJsonValue(false);
            break;
        case 'n':
            if (literal("null"))
                return QJsonValue(QJsonValue::Null);
            break;
        case 'N':
            if (literal("NaN"))
                return QJsonValue(std::numeric_limits<double>::quiet_NaN());
            break;
        case 'I':
            if (literal("Infinity"))
                return QJsonValue(std::numeric_limits<double>::infinity());
            break;
        default:
            if (*m_p == '-' || (*m_p >= '0' && *m_p <= '9'))
                return number();
            break;
        }
        return bad(QStringLiteral("unexpected character '%1', expected a value").arg(QLatin1Char(*m_p)));
    }

    QJsonValue number()
    {
        const char* start = m_p;
        if (*m_p == '-') {
            ++m_p;
            if (literal("Infinity"))
                return QJsonValue(-std::numeric_limits<double>::infinity());
        }
        const char* intStart = m_p;
        while (m_p < m_end && *m_p >= '0' && *m_p <= '9')
            ++m_p;
        if (m_p == intStart)
            return bad(QStringLiteral("digit expected"));
        if (*intStart == '0' && m_p - intStart > 1)
            return bad(QStringLiteral("leading zero in a number"));
        bool integral = true;
        if (m_p < m_end && *m_p == '.') {
            integral = false;
            ++m_p;
            const char* f = m_p;
            while (m_p < m_end && *m_p >= '0' && *m_p <= '9')
                ++m_p;
            if (m_p == f)
                return bad(QStringLiteral("digit expected after '.'"));
        }
        if (m_p < m_end && (*m_p == 'e' || *m_p == 'E')) {
            integral = false;
            ++m_p;
            if (m_p < m_end && (*m_p == '+' || *m_p == '-'))
                ++m_p;
            const char* e = m_p;
            while (m_p < m_end && *m_p >= '0' && *m_p <= '9')
                ++m_p;
            if (m_p == e)
                return bad(QStringLiteral("digit expected in exponent"));
        }
        if (integral) {
            qint64 i = 0;
            const auto [ptr, ec] = std::from_chars(start, m_p, i);
            if (ec == std::errc() && ptr == m_p)
                return QJsonValue(i);
        }
        const std::optional<double> d = parseDecimal(std::string_view(start, size_t(m_p - start)));
        if (!d)
            return bad(QStringLiteral("invalid number"));
        return QJsonValue(*d);
    }

    static int hex(char c)
    {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
            return c - 'A' + 10;
        return -1;
    }

    bool hex4(char32_t& out)
    {
        if (m_end - m_p < 4) {
            bad(QStringLiteral("truncated \\u escape"));
            return false;
        }
        out = 0;
        for (int i = 0; i < 4; ++i) {
            const int h = hex(m_p[i]);
            if (h < 0) {
                bad(QStringLiteral("invalid \\u escape"));
                return false;
            }
            out = out * 16 + char32_t(h);
        }
        m_p += 4;
        return true;
    }

    bool string(QString& out)
    {
        ++m_p; // opening quote
        QByteArray utf8;
        const char* run = m_p;
        while (true) {
            if (m_p >= m_end) {
                bad(QStringLiteral("unterminated string"));
                return false;
            }
            const char c = *m_p;
            if (c == '"')
                break;
            if (static_cast<unsigned char>(c) < 0x20) {
                bad(QStringLiteral("control character in string"));
                return false;
            }
            if (c != '\\') {
                ++m_p;
                continue;
            }
            utf8.append(run, m_p - run);
            ++m_p;
            if (m_p >= m_end) {
                bad(QStringLiteral("unterminated string"));
                return false;
            }
            const char e = *m_p++;
            switch (e) {
            case '"': utf8.append('"'); break;
            case '\\': utf8.append('\\'); break;
            case '/': utf8.append('/'); break;
            case 'b': utf8.append('\b'); break;
            case 'f': utf8.append('\f'); break;
            case 'n': utf8.append('\n'); break;
            case 'r': utf8.append('\r'); break;
            case 't': utf8.append('\t'); break;
            case 'u': {
                char32_t cp = 0;
                if (!hex4(cp))
                    return false;
                if (cp >= 0xD800 && cp <= 0xDBFF && m_end - m_p >= 6 && m_p[0] == '\\' && m_p[1] == 'u') {
                    const char* save = m_p;
                    m_p += 2;
                    char32_t lo = 0;
                    if (!hex4(lo))
                        return false;
                    if (lo >= 0xDC00 && lo <= 0xDFFF)
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    else
                        m_p = save; // lone high surrogate; the next escape stands alone
                }
                if (cp >= 0xD800 && cp <= 0xDFFF)
                    cp = 0xFFFD; // lone surrogate
                utf8.append(QString::fromUcs4(&cp, 1).toUtf8());
                break;
            }
            default:
                --m_p;
                bad(QStringLiteral("invalid escape '\\%1'").arg(QLatin1Char(e)));
                return false;
            }
            run = m_p;
        }
        utf8.append(run, m_p - run);
        ++m_p; // closing quote
        out = QString::fromUtf8(utf8);
        return true;
    }

    QJsonValue object(int depth)
    {
        if (depth > m_maxDepth)
            return bad(QStringLiteral("nested deeper than %1 levels").arg(m_maxDepth));
        ++m_p;
        QJsonObject obj;
        skipWs();
        if (m_p < m_end && *m_p == '}') {
            ++m_p;
            return obj;
        }
        while (true) {
            skipWs();
            if (m_p >= m_end || *m_p != '"')
                return bad(QStringLiteral("expected a string key"));
            QString key;
            if (!string(key))
                return QJsonValue();
            skipWs();
            if (m_p >= m_end || *m_p != ':')
                return bad(QStringLiteral("expected ':'"));
            ++m_p;
            skipWs();
            QJsonValue v = value(depth);
            if (!m_error.isEmpty())
                return QJsonValue();
            obj.insert(key, v);
            skipWs();
            if (m_p < m_end && *m_p == ',') {
                ++m_p;
                continue;
            }
            if (m_p < m_end && *m_p == '}') {
                ++m_p;
                return obj;
            }
            return bad(QStringLiteral("expected ',' or '}'"));
        }
    }

    QJsonValue array(int depth)
    {
        if (depth > m_maxDepth)
            return bad(QStringLiteral("nested deeper than %1 levels").arg(m_maxDepth));
        ++m_p;
        QJsonArray arr;
        skipWs();
        if (m_p < m_end && *m_p == ']') {
            ++m_p;
            return arr;
        }
        while (true) {
            skipWs();
            QJsonValue v = value(depth);
            if (!m_error.isEmpty())
                return QJsonValue();
            arr.append(v);
            skipWs();
            if (m_p < m_end && *m_p == ',') {
                ++m_p;
                continue;
            }
            if (m_p < m_end && *m_p == ']') {
                ++m_p;
                return arr;
            }
            return bad(QStringLiteral("expected ',' or ']'"));
        }
    }

    const char* m_p;
    const char* m_begin;
    const char* m_end;
    int m_maxDepth;
    QString m_error;
};

void flattenInto(const QJsonObject& o, const QString& prefix, QList<std::pair<QString, double>>& out, int depth)
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        const QString key = prefix.isEmpty() ? it.key() : prefix + QLatin1Char('.') + it.key();
        const QJsonValue v = it.value();
        if (v.isDouble())
            out.append({key, v.toDouble()});
        else if (v.isObject() && depth < 64)
            flattenInto(v.toObject(), key, out, depth + 1);
    }
}

} // namespace

Result<QJsonValue> parseLenientJson(QByteArrayView text, int maxDepth)
{
    return Parser(text, maxDepth).parseDocument();
}

QList<std::pair<QString, double>> flattenJsonNumbers(const QJsonObject& object)
{
    QList<std::pair<QString, double>> out;
    flattenInto(object, QString(), out, 0);
    return out;
}

std::optional<double> parseMetricNumber(QByteArrayView text)
{
    qsizetype b = 0, e = text.size();
    while (b < e && (text[b] == ' ' || text[b] == '\t'))
        ++b;
    while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r'))
        --e;
    if (b == e || e - b > 4096)
        return std::nullopt;
    const char* s = text.data() + b;
    const char* end = text.data() + e;
    bool neg = false;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        ++s;
    }
    const qsizetype n = end - s;
    auto eqNoCase = [&](const char* w) {
        const qsizetype wl = qsizetype(std::char_traits<char>::length(w));
        if (wl != n)
            return false;
        for (qsizetype i = 0; i < n; ++i) {
            if ((s[i] | 0x20) != w[i])
                return false;
        }
        return true;
    };
    if (eqNoCase("nan"))
        return std::numeric_limits<double>::quiet_NaN();
    if (eqNoCase("inf") || eqNoCase("infinity"))
        return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (n == 0 || *s == '+' || *s == '-')
        return std::nullopt;
    const std::optional<double> d = parseDecimal(std::string_view(s, size_t(end - s)));
    if (!d)
        return std::nullopt;
    return neg ? -*d : *d;
}

} // namespace ty
