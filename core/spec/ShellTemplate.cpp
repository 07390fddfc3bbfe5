#include "ShellTemplate.h"

#include "common/ShellQuote.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <QStringList>

#include <vector>

namespace ty {

namespace {

enum class Ctx {
    Unquoted,   // top level, or inside $( )
    Single,     // '...'
    Double,     // "..."
    Backquote,  // `...`
    Brace,      // ${...}
    Arith,      // $((...))
    AnsiC,      // $'...'
    Comment,    // # to the end of the line
    Heredoc,    // the body of a here-document
};

struct Frame {
    Ctx ctx;
    int depth = 0; // parentheses of a $( ) or $(( )), braces of a ${ }
    bool command = false; // an Unquoted frame opened by $(
};

QString why(Ctx c, const QString& name)
{
    const QString p = QStringLiteral("{{%1}}").arg(name);
    switch (c) {
    case Ctx::Backquote:
        return QStringLiteral("%1 is inside `backquotes`, where it cannot be quoted safely: use $(...) instead").arg(p);
    case Ctx::Brace:
        return QStringLiteral("%1 is inside ${...}, where it cannot be quoted safely: put it outside, e.g. "
                              "\"${VAR:-}\"%1")
            .arg(p);
    case Ctx::Arith:
        return QStringLiteral("%1 is inside $((...)), where a value would be evaluated as arithmetic: pass it as an "
                              "argument, or read $TRAINYARD_PARAM_%2 instead")
            .arg(p, name.toUpper());
    case Ctx::AnsiC:
        return QStringLiteral("%1 is inside $'...', which not every /bin/sh knows: use '...' or \"...\"").arg(p);
    case Ctx::Comment:
        return QStringLiteral("%1 is inside a # comment, where a newline in the value would end the comment and run "
                              "the rest")
            .arg(p);
    case Ctx::Heredoc:
        return QStringLiteral("%1 is inside a here-document, where it cannot be quoted: write the value with "
                              "printf '%%s\\n' %1 instead")
            .arg(p);
    default:
        return QString();
    }
}

bool isWordStart(const QString& s, qsizetype i)
{
    if (i == 0)
        return true;
    const QChar c = s.at(i - 1);
    return c.isSpace() || c == u';' || c == u'&' || c == u'|' || c == u'(' || c == u')';
}

} // namespace

std::expected<QString, ShellTemplateError> fillShellTemplate(const QString& command, const ParamLookup& value)
{
    static const QRegularExpression placeholder(QStringLiteral("\\G\\{\\{\\s*([A-Za-z_][A-Za-z0-9_.-]*)\\s*\\}\\}"));
    QString out;
    out.reserve(command.size());
    std::vector<Frame> stack{Frame{Ctx::Unquoted}};
    QStringList pendingHeredocs; // delimiters of << seen on the current line
    QString heredocEnd;          // the body being read ends at a line equal to this
    bool heredocTabs = false;    // <<- strips leading tabs from the delimiter line
    const qsizetype n = command.size();
    qsizetype i = 0;
    const auto at = [&](qsizetype k) { return k < n ? command.at(k) : QChar(); };
    const auto fail = [](qsizetype offset, const QString& message) {
        return std::unexpected(ShellTemplateError{offset, message});
    };
    // The body of the first here-document pending on the line just ended.
    const auto startHeredoc = [&] {
        const QString d = pendingHeredocs.takeFirst();
        heredocTabs = d.startsWith(u'\t');
        heredocEnd = heredocTabs ? d.mid(1) : d;
        stack.push_back(Frame{Ctx::Heredoc});
    };
    // In a body, at the newline `nl` (already copied): when the next line is
    // the delimiter, copies it, ends the body (starting the next pending one)
    // and moves i to the newline after it.
    const auto endsHeredocAfter = [&](qsizetype nl) {
        for (;;) {
            qsizetype e = command.indexOf(u'\n', nl + 1);
            if (e < 0)
                e = n;
            QStringView line = QStringView(command).mid(nl + 1, e - nl - 1);
            if (heredocTabs)
                while (line.startsWith(u'\t'))
                    line = line.mid(1);
            if (line != heredocEnd)
                return false;
            out += QStringView(command).mid(nl + 1, e - nl - 1);
            stack.pop_back();
            i = e; // the newline after the delimiter line (or the end)
            if (i < n)
                out += command.at(i);
            ++i;
            if (pendingHeredocs.isEmpty() || i > n)
                return true;
            startHeredoc();
            nl = i - 1;
        }
    };
    while (i < n) {
        Frame& top = stack.back();
        // A placeholder here?
        if (command.at(i) == u'{' && at(i + 1) == u'{') {
            const auto m = placeholder.match(command, i);
            if (m.hasMatch()) {
                const QString name = m.captured(1);
                const std::optional<QString> v = value(name);
                if (!v)
                    return fail(i, QStringLiteral("'command' uses {{%1}} but 'params' has no '%1'").arg(name));
                if (i > 0 && command.at(i - 1) == u'$' && top.ctx != Ctx::Single)
                    return fail(i, QStringLiteral("{{%1}} right after a $ would make the value part of an expansion: "
                                                  "put something between them").arg(name));
                switch (top.ctx) {
                case Ctx::Unquoted:
                    out += shellQuote(*v); // a plain word as it is, anything else '...'-quoted
                    break;
                case Ctx::Single:
                    out += QString(*v).replace(u'\'', QStringLiteral("'\\''"));
                    break;
                case Ctx::Double:
                    out += u'"' + (u'\'' + QString(*v).replace(u'\'', QStringLiteral("'\\''")) + u'\'') + u'"';
                    break;
                default:
                    return fail(i, why(top.ctx, name));
                }
                i = m.capturedEnd();
                continue;
            }
        }
        const QChar c = command.at(i);
        if (c == u'$' && top.ctx != Ctx::Single && at(i + 1) == u'{' && at(i + 2) == u'{') {
            const auto m = placeholder.match(command, i + 1);
            if (m.hasMatch())
                return fail(i + 1, QStringLiteral("{{%1}} right after a $ would make the value part of an expansion: "
                                                  "put something between them")
                                       .arg(m.captured(1)));
        }
        // A backslash escapes the next character (not in '...', $'...' has its own).
        if (c == u'\\' && (top.ctx == Ctx::Unquoted || top.ctx == Ctx::Double || top.ctx == Ctx::Backquote
                           || top.ctx == Ctx::AnsiC || top.ctx == Ctx::Brace)) {
            if (at(i + 1) == u'{' && at(i + 2) == u'{' && placeholder.match(command, i + 1).hasMatch())
                return fail(i + 1, QStringLiteral("{{%1}} right after a backslash: the backslash would apply to the "
                                                  "quoting of the value, not to it")
                                       .arg(placeholder.match(command, i + 1).captured(1)));
            out += c;
            if (i + 1 < n)
                out += command.at(i + 1);
            i += 2;
            continue;
        }
        out += c;
        switch (top.ctx) {
        case Ctx::Unquoted:
            if (c == u'\'') {
                stack.push_back(Frame{Ctx::Single});
            } else if (c == u'"') {
                stack.push_back(Frame{Ctx::Double});
            } else if (c == u'`') {
                stack.push_back(Frame{Ctx::Backquote});
            } else if (c == u'#' && isWordStart(command, i)) {
                stack.push_back(Frame{Ctx::Comment});
            } else if (c == u'$' && at(i + 1) == u'\'') {
                out += command.at(++i);
                stack.push_back(Frame{Ctx::AnsiC});
            } else if (c == u'$' && at(i + 1) == u'(' && at(i + 2) == u'(') {
                out += command.at(++i);
                out += command.at(++i);
                stack.push_back(Frame{Ctx::Arith, 2});
            } else if (c == u'$' && at(i + 1) == u'(') {
                out += command.at(++i);
                stack.push_back(Frame{Ctx::Unquoted, 1, true});
            } else if (c == u'$' && at(i + 1) == u'{') {
                out += command.at(++i);
                stack.push_back(Frame{Ctx::Brace, 1});
            } else if (c == u'(' && top.command) {
                ++top.depth;
            } else if (c == u')' && top.command && --top.depth == 0) {
                stack.pop_back();
            } else if (c == u'<' && at(i + 1) == u'<' && at(i + 2) != u'<') {
                // A here-document: its delimiter word follows (quotes removed).
                qsizetype k = i + 2;
                out += command.at(i + 1);
                const bool tabs = at(k) == u'-';
                if (tabs)
                    out += command.at(k++);
                while (k < n && (command.at(k) == u' ' || command.at(k) == u'\t'))
                    out += command.at(k++);
                QString word;
                while (k < n && !command.at(k).isSpace() && command.at(k) != u';' && command.at(k) != u'|'
                       && command.at(k) != u'&' && command.at(k) != u'<' && command.at(k) != u'>') {
                    if (command.at(k) != u'\'' && command.at(k) != u'"' && command.at(k) != u'\\')
                        word += command.at(k);
                    out += command.at(k++);
                }
                pendingHeredocs << (tabs ? u'\t' + word : word);
                i = k;
                continue;
            } else if (c == u'\n' && !pendingHeredocs.isEmpty()) {
                startHeredoc();
                if (endsHeredocAfter(i))
                    continue;
            }
            break;
        case Ctx::Single:
            if (c == u'\'')
                stack.pop_back();
            break;
        case Ctx::Double:
            if (c == u'"') {
                stack.pop_back();
            } else if (c == u'`') {
                stack.push_back(Frame{Ctx::Backquote});
            } else if (c == u'$' && at(i + 1) == u'(' && at(i + 2) == u'(') {
                out += command.at(++i);
                out += command.at(++i);
                stack.push_back(Frame{Ctx::Arith, 2});
            } else if (c == u'$' && at(i + 1) == u'(') {
                out += command.at(++i);
                stack.push_back(Frame{Ctx::Unquoted, 1, true});
            } else if (c == u'$' && at(i + 1) == u'{') {
                out += command.at(++i);
                stack.push_back(Frame{Ctx::Brace, 1});
            }
            break;
        case Ctx::Backquote:
            if (c == u'`')
                stack.pop_back();
            break;
        case Ctx::Brace:
            if (c == u'{')
                ++top.depth;
            else if (c == u'}' && --top.depth == 0)
                stack.pop_back();
            break;
        case Ctx::Arith:
            if (c == u'(')
                ++top.depth;
            else if (c == u')' && --top.depth == 0)
                stack.pop_back();
            break;
        case Ctx::AnsiC:
            if (c == u'\'')
                stack.pop_back();
            break;
        case Ctx::Comment:
            if (c == u'\n') {
                stack.pop_back();
                if (!pendingHeredocs.isEmpty() && stack.back().ctx == Ctx::Unquoted) {
                    startHeredoc();
                    if (endsHeredocAfter(i))
                        continue;
                }
            }
            break;
        case Ctx::Heredoc:
            if (c == u'\n' && endsHeredocAfter(i))
                continue;
            break;
        }
        ++i;
    }
    return out;
}

bool isShellScriptArgument(const QStringList& argv, qsizetype index)
{
    static const QStringList shells{QStringLiteral("sh"),  QStringLiteral("bash"), QStringLiteral("dash"),
                                    QStringLiteral("ksh"), QStringLiteral("mksh"), QStringLiteral("zsh")};
    if (argv.isEmpty() || index <= 1 || index >= argv.size())
        return false;
    if (!shells.contains(QFileInfo(argv.front()).fileName()))
        return false;
    const QString& opt = argv.at(index - 1);
    return opt.size() >= 2 && opt.startsWith(u'-') && !opt.startsWith(QStringLiteral("--")) && opt.contains(u'c');
}

} // namespace ty
