#include "GitIgnore.h"

namespace ty {

QString gitGlobToRegex(const QString& glob)
{
    QString re;
    re.reserve(glob.size() * 2 + 8);
    const qsizetype n = glob.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = glob[i];
        if (c == u'*') {
            const bool dbl = i + 1 < n && glob[i + 1] == u'*';
            const bool atSegStart = i == 0 || glob[i - 1] == u'/';
            const bool segEnds = i + 2 >= n || glob[i + 2] == u'/';
            if (dbl && atSegStart && segEnds) {
                if (i + 2 >= n) {
                    re += QStringLiteral(".*"); // trailing "**": everything inside
                    i += 1;
                } else {
                    re += QStringLiteral("(?:.*/)?"); // "**/": zero or more directories
                    i += 2;
                }
                continue;
            }
            while (i + 1 < n && glob[i + 1] == u'*')
                ++i; // other runs of stars are one star
            re += QStringLiteral("[^/]*");
        } else if (c == u'?') {
            re += QStringLiteral("[^/]");
        } else if (c == u'[') {
            qsizetype j = i + 1;
            if (j < n && (glob[j] == u'!' || glob[j] == u'^'))
                ++j;
            if (j < n && glob[j] == u']')
                ++j;
            while (j < n && glob[j] != u']')
                ++j;
            if (j >= n) {
                re += QStringLiteral("\\[");
                continue;
            }
            QString cls = glob.mid(i + 1, j - i - 1);
            QString out = QStringLiteral("[");
            qsizetype k = 0;
            if (!cls.isEmpty() && (cls[0] == u'!' || cls[0] == u'^')) {
                out += u'^';
                k = 1;
            }
            for (; k < cls.size(); ++k) {
                if (cls[k] == u'\\' || cls[k] == u'[' || (cls[k] == u']' && k > 0))
                    out += u'\\';
                out += cls[k];
            }
            out += u']';
            re += out;
            i = j;
        } else if (c == u'\\' && i + 1 < n) {
            re += QRegularExpression::escape(QString(glob[++i]));
        } else {
            re += QRegularExpression::escape(QString(c));
        }
    }
    return u'^' + re + u'$';
}

void GitIgnore::addFile(const QString& dir, const QByteArray& content)
{
    for (const QByteArray& raw : content.split('\n'))
        addPattern(dir, QString::fromUtf8(raw));
}

void GitIgnore::addPattern(const QString& dir, const QString& lineIn)
{
    QString line = lineIn;
    if (line.endsWith(u'\r'))
        line.chop(1);
    // Trailing spaces are dropped unless escaped with a backslash.
    while (line.endsWith(u' ') && !(line.size() >= 2 && line[line.size() - 2] == u'\\'))
        line.chop(1);
    if (line.isEmpty() || line.startsWith(u'#'))
        return;
    Rule r;
    r.dir = dir;
    if (line.startsWith(u'!')) {
        r.negate = true;
        line.remove(0, 1);
    } else if (line.startsWith(QStringLiteral("\\!")) || line.startsWith(QStringLiteral("\\#"))) {
        line.remove(0, 1);
    }
    if (line.endsWith(u'/') && !line.endsWith(QStringLiteral("\\/"))) {
        r.dirOnly = true;
        while (line.endsWith(u'/'))
            line.chop(1);
    }
    if (line.isEmpty())
        return;
    r.anchored = line.contains(u'/');
    if (line.startsWith(u'/'))
        line.remove(0, 1);
    r.re = QRegularExpression(gitGlobToRegex(line));
    if (!r.re.isValid())
        return;
    m_rules.append(std::move(r));
}

bool GitIgnore::ignored(const QString& path, bool isDir) const
{
    const qsizetype slash = path.lastIndexOf(u'/');
    const QString name = slash < 0 ? path : path.mid(slash + 1);
    // Rules are in file order, files from the root down: the last match wins.
    for (qsizetype i = m_rules.size() - 1; i >= 0; --i) {
        const Rule& r = m_rules[i];
        if (r.dirOnly && !isDir)
            continue;
        QString below;
        if (r.dir.isEmpty()) {
            below = path;
        } else {
            if (!path.startsWith(r.dir) || path.size() <= r.dir.size() || path[r.dir.size()] != u'/')
                continue;
            below = path.mid(r.dir.size() + 1);
        }
        const bool hit = r.anchored ? r.re.match(below).hasMatch() : r.re.match(name).hasMatch();
        if (hit)
            return !r.negate;
    }
    return false;
}

} // namespace ty
