#pragma once

// A local workdir as Trainyard selects it: the files and symlinks that
// workdir sync uploads (core/nodes/WorkdirSync.h) and that memoization hashes
// as a step's code (core/memo/TreeHasher.h). One selection for both, so a
// file sync leaves out never changes a cache key and a file it uploads always
// does.
//
// Selection: `.git/` is skipped always, and whatever the .gitignore files
// exclude (GitIgnore.h; nested files honoured, a parent's before its
// children's). Symlinks are kept as git keeps them: the link itself with its
// target text (readlink(2)), never followed, whatever it points to (inside
// the tree, outside it, absolute, nowhere); the walk never descends into a
// linked folder. FIFOs, sockets, devices and names whose bytes are not valid
// UTF-8 are listed in `skipped`, not selected.
//
// Blocking (reads folders and stats every entry); any thread. Pure apart from
// that file-system access: no Qt event loop, no state between calls.

#include "core/common/Result.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace ty {

struct WorkdirFile {
    QString rel; // relative to the workdir, '/'-separated, no leading '/'
    qint64 size = 0;
    int mode = 0644; // permission bits (st_mode & 0777)
    // From the same stat(2), for caches that must notice a change without
    // reading the file (TreeHasher): nanoseconds since the epoch, and the
    // file's identity on its device.
    qint64 mtimeNs = 0;
    qint64 ctimeNs = 0;
    quint64 inode = 0;
    quint64 device = 0;
};

struct WorkdirLink {
    QString rel;    // relative to the workdir, '/'-separated
    QString target; // the link's text, exactly as readlink(2) gives it
};

struct WorkdirScan {
    QString root; // absolute local workdir
    QList<WorkdirFile> files;
    QList<WorkdirLink> links; // symlinks not excluded by .gitignore (not followed)
    QStringList skipped;      // "rel (why)": FIFOs, sockets, devices, names that are not valid UTF-8
    qint64 totalBytes = 0;    // of `files`
    int ignored = 0;          // entries excluded by .gitignore or .git/
};

// Walks `root` (files in each folder by name). `honourGitIgnore` false:
// every file but `.git/` (a data folder declared as a step's input, whose
// own .gitignore often excludes everything). Errors: `root` is not a
// directory ("<root> is not a directory"), a symlink whose text cannot be read
// ("cannot read the symbolic link <path>: <why>"). A folder that cannot be
// listed reads as empty (QDir's behaviour; the caller is not told).
Result<WorkdirScan> scanWorkdirTree(const QString& root, bool honourGitIgnore = true);

// readlink(2) of `path`, decoded as a file name. Error: "cannot read the
// symbolic link <path>: <strerror>".
Result<QString> readLinkText(const QString& path);

} // namespace ty
