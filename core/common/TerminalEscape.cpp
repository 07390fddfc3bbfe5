#include "TerminalEscape.h"

namespace ty {

QString escapeForTerminal(const QString& text)
{
    QString out;
    out.reserve(text.size());
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        switch (u) {
        case u'\\': out += QStringLiteral("\\\\"); continue;
        case u'\n': out += QStringLiteral("\\n"); continue;
        case u'\t': out += QStringLiteral("\\t"); continue;
        case u'\r': out += QStringLiteral("\\r"); continue;
        case 0x1b: out += QStringLiteral("\\e"); continue;
        default: break;
        }
        if (u < 0x20 || u == 0x7f)
            out += QStringLiteral("\\x%1").arg(int(u), 2, 16, QLatin1Char('0'));
        else if ((u >= 0x80 && u < 0xa0) || (u >= 0x200b && u <= 0x200f) || u == 0x2028 || u == 0x2029
                || (u >= 0x202a && u <= 0x202e) || (u >= 0x2066 && u <= 0x2069) || u == 0xfeff)
            out += QStringLiteral("\\u%1").arg(int(u), 4, 16, QLatin1Char('0'));
        else
            out += c;
    }
    return out;
}

} // namespace ty
