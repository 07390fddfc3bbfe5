#pragma once

// A memoized step's cache key (issue #24): computed, never written by hand,
// from what decides the step's result. Pure; any thread.
//
// In the key: the resolved command and argv, the environment and params
// (minus the names in `ignore`), the resources that change results (GPU type
// and count), the content of the step's code (its workdir as TreeHasher
// hashes it: the digest of the file list), the content of its declared
// inputs, the keys or output digests of the upstream steps it consumes, and
// key_extra (the user's salt). Not in the key: the step's name (a renamed step
// with the same inputs hits the same entry), where the workdir lies (only its
// content), and the ignored names themselves.
//
// Canonical serialisation (canonicalJson(); format "trainyard-memo-1"): one
// JSON object, no white space, members sorted by name in code point order,
// strings as RFC 8785 (JSON Canonicalization Scheme) writes them (`"` and `\`
// escaped, U+0000-U+001F as \b \f \n \r \t or \u00xx lowercase, everything
// else as raw UTF-8), integers in decimal:
//   {"argv":[...],"code":"<treeDigest(codeFiles)>","command":"...",
//    "env":{name:value,...},"format":"trainyard-memo-1","gpu_count":N,
//    "gpu_type":"...","inputs":[{"kind":k,"path":p,"sha256":h,"size":N},...]
//    (sorted by path),"key_extra":"...","params":{...},"upstream":{step:digest,...}}
// The key is the lowercase hex SHA-256 of those UTF-8 bytes. So it is the same
// in every process and whatever order maps were filled in; a new format name
// changes every key (a miss, never a wrong hit).

#include "FileDigest.h"
#include "core/common/Result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace ty {

struct MemoComponents {
    QString step;     // explanation only (MemoExplain); not in the key
    QString command;  // the command line as resolved for the step ("" when argv is all)
    QStringList argv; // the resolved argv
    QMap<QString, QString> env;
    QMap<QString, QString> params;
    QString gpuType; // e.g. "A100"; "" = no GPU or any
    int gpuCount = 0;
    QList<FileDigest> codeFiles;     // TreeHash::files of the step's workdir (sorted by path)
    QList<FileDigest> inputs;        // declared inputs (TreeHasher::hashInput), any order
    QMap<QString, QString> upstream; // upstream step name -> its key or output digest
    QString keyExtra;
    QStringList ignored; // names applyIgnore() dropped (explanation only; not in the key)

    bool operator==(const MemoComponents&) const = default;
};

// `ignore`: each name drops the param and the env variable of that name; the
// names are recorded in `ignored` (sorted, each once).
MemoComponents applyIgnore(MemoComponents c, const QStringList& ignore);

// The canonical document above, and its SHA-256 (64 lowercase hex digits).
QByteArray canonicalJson(const MemoComponents& c);
QString memoKey(const MemoComponents& c);

// Every component (the step, the code file list and the ignored names too),
// for storage: {"step", "command", "argv", "env", "params", "gpu_type",
// "gpu_count", "code_files": [{"path","kind","size","sha256"}], "inputs"
// (same shape), "upstream", "key_extra", "ignored", "format"}.
QJsonObject componentsToJson(const MemoComponents& c);
// The reverse. Errors: not an object of that shape (a member of the wrong
// type, an unknown kind, a sha256 that is not 64 lowercase hex digits), a
// format other than "trainyard-memo-1".
Result<MemoComponents> componentsFromJson(const QJsonObject& o);

inline constexpr const char* kMemoKeyFormat = "trainyard-memo-1";

} // namespace ty
