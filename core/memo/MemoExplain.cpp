#include "MemoExplain.h"

#include "core/common/ShellQuote.h"

#include <QHash>
#include <QSet>

namespace ty {
namespace {

QString shown(const QString& value)
{
    return shellQuote(value);
}

QString commandLine(const MemoComponents& c)
{
    QStringList words;
    for (const QString& a : c.argv)
        words << shellQuote(a);
    return words.join(u' ');
}

// Changes of one name -> value map ("param", "env"); names ignored on one
// side only are said so instead of added/removed.
void compareMap(QStringList& out, const QString& what, const QMap<QString, QString>& before,
        const QMap<QString, QString>& after, const QStringList& ignoredBefore, const QStringList& ignoredAfter)
{
    QStringList names = before.keys() + after.keys();
    names.sort();
    names.removeDuplicates();
    for (const QString& name : std::as_const(names)) {
        const bool was = before.contains(name);
        const bool is = after.contains(name);
        if (was && is) {
            if (before.value(name) != after.value(name))
                out << QStringLiteral("%1 %2 %3 -> %4")
                                .arg(what, name, shown(before.value(name)), shown(after.value(name)));
        } else if (is) {
            out << (ignoredBefore.contains(name) ? QStringLiteral("%1 %2 no longer ignored").arg(what, name)
                                                 : QStringLiteral("%1 %2 added").arg(what, name));
        } else {
            out << (ignoredAfter.contains(name) ? QStringLiteral("%1 %2 now ignored").arg(what, name)
                                                : QStringLiteral("%1 %2 removed").arg(what, name));
        }
    }
}

// Changes of a file list (code tree or inputs), prefixed with `prefix`.
QStringList compareFiles(const QList<FileDigest>& before, const QList<FileDigest>& after, const QString& prefix)
{
    QHash<QString, FileDigest> old;
    for (const FileDigest& f : before)
        old.insert(f.path, f);
    QList<FileDigest> sortedAfter = after;
    sortByPath(sortedAfter);
    QList<FileDigest> sortedBefore = before;
    sortByPath(sortedBefore);
    QSet<QString> present;
    QStringList out;
    for (const FileDigest& f : std::as_const(sortedAfter)) {
        present.insert(f.path);
        const auto it = old.constFind(f.path);
        if (it == old.cend()) {
            out << QStringLiteral("%1%2 added").arg(prefix, f.path);
            continue;
        }
        const bool wasLink = it->kind == FileDigest::Kind::Link;
        const bool isLink = f.kind == FileDigest::Kind::Link;
        if (wasLink != isLink) {
            out << QStringLiteral("%1%2 %3").arg(
                    prefix, f.path, isLink ? QStringLiteral("is a link now") : QStringLiteral("is no longer a link"));
            continue;
        }
        if (it->sha256 != f.sha256 || it->size != f.size
                || (it->kind == FileDigest::Kind::Directory) != (f.kind == FileDigest::Kind::Directory))
            out << QStringLiteral("%1%2 changed").arg(prefix, f.path);
        else if (it->kind == FileDigest::Kind::File && f.kind == FileDigest::Kind::Executable)
            out << QStringLiteral("%1%2 made executable").arg(prefix, f.path);
        else if (it->kind == FileDigest::Kind::Executable && f.kind == FileDigest::Kind::File)
            out << QStringLiteral("%1%2 no longer executable").arg(prefix, f.path);
    }
    for (const FileDigest& f : std::as_const(sortedBefore))
        if (!present.contains(f.path))
            out << QStringLiteral("%1%2 removed").arg(prefix, f.path);
    return out;
}

void compareUpstream(QStringList& out, const QMap<QString, QString>& before, const QMap<QString, QString>& after)
{
    QStringList names = before.keys() + after.keys();
    names.sort();
    names.removeDuplicates();
    for (const QString& name : std::as_const(names)) {
        if (!before.contains(name))
            out << QStringLiteral("upstream %1 added").arg(name);
        else if (!after.contains(name))
            out << QStringLiteral("upstream %1 removed").arg(name);
        else if (before.value(name) != after.value(name))
            out << QStringLiteral("upstream %1 changed").arg(name);
    }
}

} // namespace

QStringList explainMiss(const std::optional<MemoComponents>& newest, const MemoComponents& now)
{
    if (!newest)
        return {QStringLiteral("no earlier entry for step %1").arg(now.step)};
    const MemoComponents& was = *newest;
    QStringList out;
    if (was.command != now.command)
        out << QStringLiteral("command changed: %1 -> %2").arg(shown(was.command), shown(now.command));
    else if (was.argv != now.argv)
        out << QStringLiteral("command changed: %1 -> %2").arg(commandLine(was), commandLine(now));
    compareMap(out, QStringLiteral("env"), was.env, now.env, was.ignored, now.ignored);
    compareMap(out, QStringLiteral("param"), was.params, now.params, was.ignored, now.ignored);
    if (was.gpuType != now.gpuType)
        out << QStringLiteral("GPU type %1 -> %2")
                        .arg(was.gpuType.isEmpty() ? QStringLiteral("none") : shown(was.gpuType),
                                now.gpuType.isEmpty() ? QStringLiteral("none") : shown(now.gpuType));
    if (was.gpuCount != now.gpuCount)
        out << QStringLiteral("GPU count %1 -> %2").arg(was.gpuCount).arg(now.gpuCount);
    const QStringList code = compareFiles(was.codeFiles, now.codeFiles, QString());
    out << code.mid(0, kMaxCodeReasons);
    if (code.size() > kMaxCodeReasons)
        out << QStringLiteral("and %1 more code files changed").arg(code.size() - kMaxCodeReasons);
    out << compareFiles(was.inputs, now.inputs, QStringLiteral("input "));
    compareUpstream(out, was.upstream, now.upstream);
    if (was.keyExtra != now.keyExtra)
        out << QStringLiteral("key_extra changed");
    return out;
}

} // namespace ty
