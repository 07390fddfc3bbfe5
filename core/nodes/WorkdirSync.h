#pragma once

// `sync: true` (JobSpec): the spec's workdir is uploaded to the node before
// the run starts, and `artifacts` are downloaded from it afterwards. Both go
// through NodeFiles, so the local node and SSH nodes (SFTP on the node's own
// session) share one code path.
//
// Sync:
//   - scanWorkdir() selects the local workdir's files and links as
//     core/workdir/WorkdirScan.h does (the selection memoization hashes too):
//     `.git/` and what the .gitignore files exclude are skipped; symlinks are
//     kept as git keeps them, the link itself with its target text, never
//     followed. More than `limitBytes` of files in all is an error naming the
//     total and the biggest files.
//   - syncToNode() mirrors the scan into a directory on the node
//     (syncDirFor(): <agent state dir>/sync/<name>-<hash of the local path>,
//     kept between runs of the same workdir) and works there. A manifest in
//     it (`.trainyard-sync.json`: per file size, SHA-256 and the node's mtime
//     after upload) lets unchanged files be skipped: a file is re-uploaded
//     when its size or SHA-256 differ from the manifest, or when the node's
//     copy is missing or no longer has the size and mtime recorded. Files are
//     written to a temporary name and renamed (a run that has a file open
//     keeps the old content); files synced before and gone locally are
//     removed (and folders that this leaves empty). Permission bits are kept.
//     Symlinks are made on the node with the same target text (NodeFiles::
//     makeLink); one already there with that text is left alone, one with
//     another text (or a file there) is replaced. Links that lead nowhere on
//     the node are listed in the report (the caller warns).
//     Nothing is written outside `remoteDir`, nor through a link: right
//     before a file or link is written, every folder on its way below
//     `remoteDir` is checked on the node (lstat) to be a real directory; a
//     symlink found there (synced earlier, or made by a run) is removed and
//     replaced by a directory (its target is not touched); a file there is
//     an error. `remoteDir` itself must be a directory, not a link.
//
// Artifacts: downloadArtifacts() copies a run's listed files into a local
// folder. The names come from the node and are not trusted: an absolute
// name, a `..` component, a symlink (on the node, checked again right before
// the copy, or in the local folder) or anything but a regular file is
// refused with an error naming it; the others are copied (temporary name,
// then rename).
//
// Blocking; run inside a NodeFileJob (AgentTransport::runFileJob).

#include "core/common/Result.h"
#include "core/nodes/AgentFiles.h"
#include "core/nodes/NodeFiles.h"
#include "core/workdir/WorkdirScan.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace ty {

// The scan's shapes (WorkdirScan.h), by the names sync has always used.
using SyncEntry = WorkdirFile;
using SyncLink = WorkdirLink;
using SyncScan = WorkdirScan;

struct SyncReport {
    int uploaded = 0;
    int skipped = 0; // already on the node with the same content (or link text)
    int removed = 0;
    int linked = 0; // symlinks made or replaced
    qint64 bytesUploaded = 0;
    QStringList danglingLinks; // "rel -> target" for synced links that lead nowhere on the node
};

// scanWorkdirTree() with the size limit; errors start with "sync: ".
// `limitBytes` <= 0: no limit. `databasePath`: the result database of the
// process that syncs, left out when it lies in the workdir with its
// companions (-wal, -shm, -journal, .runs/, .service.lock, ...) and listed in
// `skipped`: copying it would open and close the file in the process that
// holds it, which drops that process's POSIX locks on it (sqlite.org "How To
// Corrupt An SQLite Database File", 2.2.1), and a live database copied file
// by file is no copy.
Result<SyncScan> scanWorkdir(const QString& root, qint64 limitBytes, const QString& databasePath = {});
Result<SyncReport> syncToNode(const SyncScan& scan, const QString& remoteDir, NodeFiles& files);
QString syncDirFor(const QString& agentStateDir, const QString& localWorkdir);
inline constexpr const char* kSyncManifestName = ".trainyard-sync.json";

// Whether `rel` is a relative path that stays inside its folder: not empty,
// not absolute, no empty, `.` or `..` component, no NUL or backslash.
bool isSafeRelativePath(const QString& rel);

// Stage-in: files that earlier runs made (their copies on this machine, in
// the result store) put into a run's workdir on its node before the run
// starts: a pipeline step's upstream artifacts (core/pipeline). Each file is
// written as sync writes (a temporary name, then a rename; every folder on
// its way below `remoteDir` checked to be a real directory, a symlink there
// replaced by one, a file there an error), so nothing is written outside
// `remoteDir` nor through a link, whatever the run made there.
struct StageFile {
    QString local; // absolute path on this machine
    QString rel;   // where it goes below the run's workdir (isSafeRelativePath; else an error naming it)
    qint64 size = 0;
    // Made in this very workdir on this node (the producing run's node and
    // workdir are the run's own): a regular file of `size` bytes there is
    // that file, left in place; anything else there (missing, another size,
    // a link) is replaced by the copy.
    bool inPlaceIfSameSize = false;
};

struct StageReport {
    int copied = 0;
    int inPlace = 0;
    qint64 bytesCopied = 0;
};

// Copies `stage` into `remoteDir` (made when missing). `progress(done,
// total)` (bytes of the files that are copied; optional) is called on the
// calling thread between chunks, at most every 64 KiB read. Errors start
// with "stage-in to <node>: ".
Result<StageReport> stageToNode(const QList<StageFile>& stage, const QString& remoteDir, NodeFiles& files,
        const std::function<void(qint64 done, qint64 total)>& progress = {});

struct ArtifactDownload {
    QStringList downloaded; // relative names, copied
    QStringList refused;    // "name: why"
};

// Copies every listed regular file to destDir/<path>. Never fails as a whole
// for one bad entry: refused entries are listed (and the caller reports them).
Result<ArtifactDownload> downloadArtifacts(const AgentFileList& list, const QString& destDir, NodeFiles& files);

} // namespace ty
