#pragma once

// One hashed file as memoization sees it: a file of a step's code tree
// (TreeHasher), a declared input, or a recorded output. Pure data and pure
// functions, any thread.

#include <QList>
#include <QString>

namespace ty {

struct FileDigest {
    enum class Kind {
        File,       // a regular file: sha256 of its bytes
        Executable, // a regular file with an execute bit set (mode & 0111): as File
        Link,       // a symbolic link: sha256 of its target text (readlink(2) bytes), never followed
        Directory,  // a declared input folder: sha256 is its tree digest (treeDigest()), size its bytes
    };
    QString path; // relative to the tree ('/'-separated), or as the step declared it
    Kind kind = Kind::File;
    qint64 size = 0; // bytes of the content hashed (a link: of its target text)
    QString sha256;  // 64 lowercase hex digits

    bool operator==(const FileDigest&) const = default;
};

// "file", "exec", "link", "dir" (how the kind is written in JSON and digests);
// kindFromName() returns false for any other text.
QString kindName(FileDigest::Kind kind);
bool kindFromName(const QString& name, FileDigest::Kind* kind);

// Whether `hex` is a SHA-256 as FileDigest holds it: 64 lowercase hex digits.
bool isSha256Hex(const QString& hex);

// Sorts by path in UTF-8 byte order (= code point order; QString's own
// comparison is UTF-16 order, which differs above U+FFFF).
void sortByPath(QList<FileDigest>& files);

// The digest of a list of files (sorted by sortByPath(), each path once):
// lowercase hex SHA-256 of the UTF-8 bytes
//   "trainyard-tree-1\n" then, per file, kind ' ' sha256 ' ' size ' ' path '\0'
// (kind as kindName(), size in decimal; NUL cannot occur in a path, so the
// encoding is unambiguous). Changes whenever a file is added, removed,
// renamed, changes kind (an execute bit, a file turned link) or content.
QString treeDigest(const QList<FileDigest>& sortedFiles);

} // namespace ty
