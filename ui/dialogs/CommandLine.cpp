#include "CommandLine.h"

#include <QRegularExpression>

namespace ty {

Result<QStringList> CommandLine::split(const QString& line)
{
    QStringList words;
    QString word;
    bool inWord = false;
    qsizetype i = 0;
    const qsizetype n = line.size();
    while (i < n) {
        const QChar c = line.at(i);
        if (c == u' ' || c == u'\t') {
            if (inWord) {
                words << word;
                word.clear();
                inWord = false;
            }
            ++i;
            continue;
        }
        inWord = true;
        if (c == u'\'') {
            const qsizetype end = line.indexOf(u'\'', i + 1);
            if (end < 0)
                return fail(QStringLiteral("column %1: unterminated single quote").arg(i + 1));
            word += QStringView(line).mid(i + 1, end - i - 1);
            i = end + 1;
        } else if (c == u'"') {
            const qsizetype start = i;
            ++i;
            bool closed = false;
            while (i < n) {
                const QChar d = line.at(i);
                if (d == u'"') {
                    closed = true;
                    ++i;
                    break;
                }
                if (d == u'\\' && i + 1 < n) {
                    const QChar e = line.at(i + 1);
                    if (e == u'"' || e == u'\\' || e == u'$' || e == u'`') {
                        word += e;
                        i += 2;
                        continue;
                    }
                }
                word += d;
                ++i;
            }
            if (!closed)
                return fail(QStringLiteral("column %1: unterminated double quote").arg(start + 1));
        } else if (c == u'\\' && i + 1 < n) {
            word += line.at(i + 1);
            i += 2;
        } else {
            word += c;
            ++i;
        }
    }
    if (inWord)
        words << word;
    return words;
}

QString CommandLine::quote(const QString& word)
{
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_@%+=:,./\\-{}]+$"));
    if (!word.isEmpty() && safe.match(word).hasMatch())
        return word;
    QString q = word;
    q.replace(u'\'', QStringLiteral("'\\''"));
    return u'\'' + q + u'\'';
}

QString CommandLine::join(const QStringList& argv)
{
    QStringList parts;
    parts.reserve(argv.size());
    for (const QString& a : argv)
        parts << quote(a);
    return parts.join(u' ');
}

} // namespace ty
