#pragma once

// `sync: true` (JobSpec): the spec's workdir is uploaded to the node before
// the run starts, and `artifacts` are downloaded from it afterwards. Both go
// through NodeFiles, so the local node and SSH nodes (SFTP on the node's own
// session) share one code path.
//
// Sync:
//   - scanWorkdir() walks the local workdir, skipping `.git/` always and
//     whatever the .gitignore files exclude (GitIgnore.h; nested files
//     honoured), and symlinks (listed in skippedLinks, neither followed nor
//     made on the node: the caller warns about them). More than `limitBytes`
//     in all is an error naming the total and the biggest files.
//   - syncToNode() mirrors the scan into a directory on the node
//     (syncDirFor(): <agent state dir>/sync/<name>-<hash of the local path>,
//     kept between runs of the same workdir) and works there. A manifest in
//     it (`.trainyard-sync.json`: per file size, SHA-256 and the node's mtime
//     after upload) lets unchanged files be skipped: a file is re-uploaded
//     when its size or SHA-256 differ from the manifest, or when the node's
//     copy is missing or no longer has the size and mtime recorded. Files are
//     written to a temporary name and renamed (a run that has a file open
//     keeps the old content); files synced before and gone locally are
//     removed. Permission bits are kept.
//
// Artifacts: downloadArtifacts() copies a run's listed files into a local
// folder. The names come from the node and are not trusted: an absolute
// name, a `..` component, a symlink (on the node, checked again right before
// the copy, or in the local folder) or anything but a regular file is
// refused with an error naming it; the others are copied (temporary name,
// then rename).
//
// Blocking; run inside a NodeFileJob (AgentTransport::runFileJob).

#include "common/Result.h"
#include "nodes/AgentFiles.h"
#include "nodes/NodeFiles.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace ty {

struct SyncEntry {
    QString rel;       // relative to the workdir, '/'-separated
    qint64 size = 0;
    int mode = 0644;
};

struct SyncScan {
    QString root;      // absolute local workdir
    QList<SyncEntry> files;
    qint64 totalBytes = 0;
    int ignored = 0;   // entries excluded by .gitignore or .git/
    QStringList skippedLinks; // symlinks not excluded by .gitignore, skipped (relative, '/'-separated)
};

struct SyncReport {
    int uploaded = 0;
    int skipped = 0;   // already on the node with the same content
    int removed = 0;
    qint64 bytesUploaded = 0;
};

// `limitBytes` <= 0: no limit.
Result<SyncScan> scanWorkdir(const QString& root, qint64 limitBytes);
Result<SyncReport> syncToNode(const SyncScan& scan, const QString& remoteDir, NodeFiles& files);
QString syncDirFor(const QString& agentStateDir, const QString& localWorkdir);
inline constexpr const char* kSyncManifestName = ".trainyard-sync.json";

// Whether `rel` is a relative path that stays inside its folder: not empty,
// not absolute, no empty, `.` or `..` component, no NUL or backslash.
bool isSafeRelativePath(const QString& rel);

struct ArtifactDownload {
    QStringList downloaded;  // relative names, copied
    QStringList refused;     // "name: why"
};

// Copies every listed regular file to destDir/<path>. Never fails as a whole
// for one bad entry: refused entries are listed (and the caller reports them).
Result<ArtifactDownload> downloadArtifacts(const AgentFileList& list, const QString& destDir, NodeFiles& files);

} // namespace ty
