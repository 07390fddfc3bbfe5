#pragma once

// .gitignore matching for the workdir scan (WorkdirScan.h: sync and memo), following
// gitignore(5) for the common cases:
//   - blank lines and `#` comments are skipped; `\#`, `\!` and `\ ` escape;
//     trailing unescaped spaces are dropped;
//   - `!pattern` re-includes what an earlier pattern excluded (the last
//     matching pattern wins; a deeper .gitignore wins over a shallower one);
//   - `dir/` matches directories only;
//   - a pattern with a `/` at its start or middle is anchored to the
//     directory of its .gitignore; otherwise it matches a name at any depth
//     below it;
//   - `*` and `?` never match `/`, `[a-z]`/`[!a-z]` are classes, a leading
//     `**/` matches in every directory, a trailing `/**` everything inside,
//     `/**/` zero or more directories.
// A path under an excluded directory stays excluded (git does not descend
// into it), which the walker gets by not descending either.
//
// Paths are relative to the sync root, '/'-separated, without a leading '/'.
// Not thread-safe for writing; const use from several threads is fine.

#include <QByteArray>
#include <QList>
#include <QRegularExpression>
#include <QString>

namespace ty {

class GitIgnore {
public:
    // Adds the patterns of the .gitignore in directory `dir` ("" = the root).
    // Files must be added from the root downwards (a parent before its children).
    void addFile(const QString& dir, const QByteArray& content);
    // Adds one pattern line as if it were in `dir`'s .gitignore.
    void addPattern(const QString& dir, const QString& line);

    // Whether `path` is excluded; `isDir` says it is a directory.
    bool ignored(const QString& path, bool isDir) const;

    qsizetype patternCount() const { return m_rules.size(); }

private:
    struct Rule {
        QString dir; // "" or "a/b" (no trailing slash)
        QRegularExpression re;
        bool negate = false;
        bool dirOnly = false;
        bool anchored = false; // matched against the path below `dir`, else against the name
    };
    QList<Rule> m_rules;
};

// The regular expression (anchored, ^...$) for one gitignore glob; exposed for tests.
QString gitGlobToRegex(const QString& glob);

} // namespace ty
