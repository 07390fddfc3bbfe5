#include "ShellTemplate.h"

#include <QList>
#include <QRegularExpression>

namespace ty {

const QRegularExpression& placeholderPattern()
{
    static const QRegularExpression re(QStringLiteral("\\{\\{\\s*([A-Za-z_][A-Za-z0-9_.-]*)\\s*\\}\\}"));
    return re;
}

QString singleQuoted(const QString& value)
{
    QString quoted = value;
    quoted.replace(u'\'', QStringLiteral("'\\''"));
    return u'\'' + quoted + u'\'';
}

namespace {

struct Refusal {
    ShellTemplateError error;
};

enum class Frame { Top, CmdSub, DoubleQuoted, SingleQuoted };

struct HereDoc {
    QString delimiter;
    bool stripTabs = false;
    bool quoted = false;
};

class Lexer {
public:
    Lexer(const QString& s, const QMap<QString, QString>& values)
        : m_s(s)
        , m_values(values)
    { }

    QString run()
    {
        m_frames.append({Frame::Top, 0});
        while (m_i < m_s.size()) {
            if (tryPlaceholder())
                continue;
            step();
        }
        return m_out;
    }

private:
    struct State {
        Frame kind;
        int parens; // CmdSub: open ( inside it
    };

    QChar at(qsizetype i) const { return i < m_s.size() ? m_s.at(i) : QChar(); }
    Frame frame() const { return m_frames.last().kind; }
    bool unquoted() const { return frame() == Frame::Top || frame() == Frame::CmdSub; }

    // A placeholder at `i`, or an empty match.
    QRegularExpressionMatch placeholderAt(qsizetype i) const
    {
        return placeholderPattern().match(
                m_s, i, QRegularExpression::NormalMatch, QRegularExpression::AnchorAtOffsetMatchOption);
    }

    [[noreturn]] void refuse(qsizetype offset, const QString& name, const QString& why) const
    {
        throw Refusal{{offset, QStringLiteral("{{%1}} %2").arg(name, why)}};
    }

    // Refuses any placeholder in [from, to): the caller copies that text as is.
    void refusePlaceholdersIn(qsizetype from, qsizetype to, const QString& why) const
    {
        auto it = placeholderPattern().globalMatch(m_s.mid(0, to), from);
        if (it.hasNext()) {
            const auto m = it.next();
            refuse(m.capturedStart(), m.captured(1), why);
        }
    }

    // The rest of the string cannot be lexed for sure: any placeholder in it is refused.
    void lose(const QString& why)
    {
        refusePlaceholdersIn(m_i, m_s.size(),
                QStringLiteral("comes after %1, so the shell's quoting at it cannot be told for sure; "
                               "pass the value in $TRAINYARD_PARAM_<NAME> instead")
                        .arg(why));
        m_out += QStringView(m_s).mid(m_i);
        m_i = m_s.size();
    }

    bool tryPlaceholder()
    {
        const auto m = placeholderAt(m_i);
        if (!m.hasMatch())
            return false;
        const QString name = m.captured(1);
        const auto it = m_values.constFind(name);
        if (it == m_values.cend())
            refuse(m_i, name, QStringLiteral("is an unknown param"));
        const QString q = singleQuoted(*it);
        switch (frame()) {
        case Frame::Top:
        case Frame::CmdSub: m_out += q; break;
        case Frame::DoubleQuoted: m_out += u'"' + q + u'"'; break;
        case Frame::SingleQuoted: m_out += u'\'' + q + u'\''; break;
        }
        m_wordStart = false;
        m_i = m.capturedEnd();
        return true;
    }

    void copy(qsizetype n = 1)
    {
        m_out += QStringView(m_s).mid(m_i, n);
        m_i += n;
    }

    void backslash()
    {
        if (placeholderAt(m_i + 1).hasMatch())
            refuse(m_i + 1, placeholderAt(m_i + 1).captured(1),
                    QStringLiteral("comes right after a backslash, which would quote the quote put around its value"));
        const QChar next = at(m_i + 1);
        if (frame() == Frame::DoubleQuoted && !QStringView(u"$`\"\\\n").contains(next)) {
            copy(1); // a literal backslash
            return;
        }
        if (next != u'\n')
            m_wordStart = false;
        copy(m_i + 1 < m_s.size() ? 2 : 1);
    }

    void backticks()
    {
        const qsizetype start = m_i;
        qsizetype j = m_i + 1;
        while (j < m_s.size() && m_s.at(j) != u'`') {
            if (m_s.at(j) == u'\'' || m_s.at(j) == u'"') {
                m_i = start;
                lose(QStringLiteral("quotes inside `...` (write $( ) instead)"));
                return;
            }
            j += m_s.at(j) == u'\\' ? 2 : 1;
        }
        refusePlaceholdersIn(start, std::min(j, m_s.size()),
                QStringLiteral("is inside `...`, where no quoting is sure (write $( ) instead)"));
        m_i = start;
        copy(std::min(j + 1, m_s.size()) - start);
        m_wordStart = false;
    }

    void dollar()
    {
        const QChar next = at(m_i + 1);
        m_wordStart = false;
        if (next == u'(' && at(m_i + 2) == u'(') {
            // $(( arithmetic )): no placeholder inside; ends where its parentheses balance.
            const qsizetype start = m_i;
            int depth = 0;
            qsizetype j = m_i + 1;
            for (; j < m_s.size(); ++j) {
                const QChar c = m_s.at(j);
                if (QStringView(u"'\"`\\$").contains(c)) {
                    lose(QStringLiteral("a $((...)) holding quotes or expansions"));
                    return;
                }
                if (c == u'(')
                    ++depth;
                else if (c == u')' && --depth == 0)
                    break;
            }
            refusePlaceholdersIn(start, std::min(j, m_s.size()), QStringLiteral("is inside $((...))"));
            copy(std::min(j + 1, m_s.size()) - start);
            return;
        }
        if (next == u'(') {
            copy(2);
            m_frames.append({Frame::CmdSub, 0});
            m_wordStart = true;
            return;
        }
        if (next == u'{') {
            const qsizetype start = m_i;
            qsizetype j = m_i + 2;
            for (; j < m_s.size() && m_s.at(j) != u'}'; ++j) {
                if (placeholderAt(j).hasMatch())
                    refuse(j, placeholderAt(j).captured(1), QStringLiteral("is inside ${...}"));
                if (QStringView(u"'\"`\\$").contains(m_s.at(j))) {
                    lose(QStringLiteral("a ${...} holding quotes or expansions"));
                    return;
                }
            }
            copy(std::min(j + 1, m_s.size()) - start);
            return;
        }
        if (next == u'\'' && unquoted()) {
            lose(QStringLiteral("a $'...' string"));
            return;
        }
        copy(1);
    }

    void comment()
    {
        qsizetype j = m_s.indexOf(u'\n', m_i);
        if (j < 0)
            j = m_s.size();
        refusePlaceholdersIn(m_i, j, QStringLiteral("is inside a comment"));
        copy(j - m_i);
    }

    // `<<` / `<<-` and the delimiter word; the body starts at the next unquoted newline.
    void hereDocOperator()
    {
        copy(2);
        HereDoc doc;
        if (at(m_i) == u'-') {
            doc.stripTabs = true;
            copy(1);
        }
        while (at(m_i) == u' ' || at(m_i) == u'\t')
            copy(1);
        const qsizetype start = m_i;
        while (m_i < m_s.size() && !QStringView(u" \t\n;&|<>()").contains(m_s.at(m_i))) {
            const QChar c = m_s.at(m_i);
            if (c == u'\'' || c == u'"') {
                doc.quoted = true;
                const qsizetype close = m_s.indexOf(c, m_i + 1);
                const qsizetype end = close < 0 ? m_s.size() : close;
                doc.delimiter += QStringView(m_s).mid(m_i + 1, end - m_i - 1);
                m_i = std::min(end + 1, m_s.size());
            } else if (c == u'\\') {
                doc.quoted = true;
                doc.delimiter += at(m_i + 1);
                m_i = std::min(m_i + 2, m_s.size());
            } else {
                doc.delimiter += c;
                ++m_i;
            }
        }
        refusePlaceholdersIn(start, m_i, QStringLiteral("is in a here-document's delimiter"));
        m_out += QStringView(m_s).mid(start, m_i - start);
        m_hereDocs.append(doc);
        m_wordStart = false;
    }

    void hereDocBodies()
    {
        for (const HereDoc& doc : std::as_const(m_hereDocs)) {
            while (m_i < m_s.size()) {
                qsizetype end = m_s.indexOf(u'\n', m_i);
                if (end < 0)
                    end = m_s.size();
                QStringView line = QStringView(m_s).mid(m_i, end - m_i);
                refusePlaceholdersIn(m_i, end, QStringLiteral("is inside a here-document"));
                if (!doc.quoted && line.endsWith(u'\\')) {
                    lose(QStringLiteral("a here-document line continued with a backslash"));
                    return;
                }
                copy(std::min(end + 1, m_s.size()) - m_i);
                if (doc.stripTabs)
                    while (line.startsWith(u'\t'))
                        line = line.mid(1);
                if (line == doc.delimiter)
                    break;
            }
        }
        m_hereDocs.clear();
    }

    void step()
    {
        const QChar c = m_s.at(m_i);
        switch (frame()) {
        case Frame::SingleQuoted:
            if (c == u'\'')
                m_frames.removeLast();
            copy(1);
            return;
        case Frame::DoubleQuoted:
            if (c == u'"') {
                m_frames.removeLast();
                copy(1);
            } else if (c == u'\\') {
                backslash();
            } else if (c == u'$') {
                dollar();
            } else if (c == u'`') {
                backticks();
            } else {
                copy(1);
            }
            return;
        case Frame::Top:
        case Frame::CmdSub: break;
        }
        State& st = m_frames.last();
        if (c == u'\\') {
            backslash();
        } else if (c == u'\'') {
            m_frames.append({Frame::SingleQuoted, 0});
            m_wordStart = false;
            copy(1);
        } else if (c == u'"') {
            m_frames.append({Frame::DoubleQuoted, 0});
            m_wordStart = false;
            copy(1);
        } else if (c == u'`') {
            backticks();
        } else if (c == u'$') {
            dollar();
        } else if (c == u'#' && m_wordStart) {
            comment();
        } else if (c == u'<' && at(m_i + 1) == u'<') {
            hereDocOperator();
        } else if (c == u'\n') {
            copy(1);
            m_wordStart = true;
            if (!m_hereDocs.isEmpty())
                hereDocBodies();
        } else if (c == u'(') {
            if (st.kind == Frame::CmdSub)
                ++st.parens;
            copy(1);
            m_wordStart = true;
        } else if (c == u')') {
            copy(1);
            m_wordStart = true;
            if (st.kind == Frame::CmdSub && st.parens-- == 0)
                m_frames.removeLast();
        } else if (QStringView(u" \t;&|<>").contains(c)) {
            copy(1);
            m_wordStart = true;
        } else {
            if (m_wordStart && st.kind == Frame::CmdSub && QStringView(m_s).mid(m_i, 4) == u"case"
                    && (m_i + 4 >= m_s.size() || QStringView(u" \t\n").contains(at(m_i + 4)))) {
                lose(QStringLiteral("a case statement inside $( ), whose ) patterns hide where $( ) ends"));
                return;
            }
            copy(1);
            m_wordStart = false;
        }
    }

    const QString& m_s;
    const QMap<QString, QString>& m_values;
    QString m_out;
    qsizetype m_i = 0;
    bool m_wordStart = true;
    QList<State> m_frames;
    QList<HereDoc> m_hereDocs;
};

} // namespace

ShellTemplateResult fillShellTemplate(const QString& command, const QMap<QString, QString>& values)
{
    try {
        return {Lexer(command, values).run(), std::nullopt};
    } catch (const Refusal& r) {
        return {QString(), r.error};
    }
}

} // namespace ty
