#pragma once

// The `list_files` request of the agent protocol (app/agent/PROTOCOL.md):
// the files of a run matching its `artifacts` globs, under the run's workdir
// and its run directory on the node. Sizes in bytes, times ms since the epoch.

#include "core/agentproto/Fields.h"
#include "core/common/Result.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace ty {

struct AgentFileEntry {
    QString root; // "workdir" or "run_dir": the directory `path` is relative to
    QString path; // relative, '/'-separated, as the agent reported it (not trusted: see WorkdirSync.h)
    QString absolutePath;
    qint64 size = 0;
    QString type;       // "file", "symlink" or "other"
    QString linkTarget; // symlinks only
    qint64 mtimeMs = 0;
    bool nameNotUtf8 = false; // the node's name is not UTF-8: `path` holds U+FFFD where its bytes were
};

struct AgentFileList {
    QString workdir; // absolute, on the node
    QString runDir;
    QList<AgentFileEntry> files;
    bool truncated = false; // the agent stopped at its entry limit
};

inline AgentFileList agentFileListFromJson(const QJsonObject& o)
{
    AgentFileList l;
    l.workdir = o.value(QLatin1StringView(agentproto::fields::kWorkdir)).toString();
    l.runDir = o.value(QLatin1StringView(agentproto::fields::kRunDir)).toString();
    l.truncated = o.value(QLatin1StringView(agentproto::fields::kTruncated)).toBool();
    for (const auto& v : o.value(QLatin1StringView(agentproto::fields::kFiles)).toArray()) {
        const QJsonObject f = v.toObject();
        AgentFileEntry e;
        e.root = f.value(QLatin1StringView(agentproto::fields::kRoot)).toString();
        e.path = f.value(QLatin1StringView(agentproto::fields::kPath)).toString();
        e.size = qint64(f.value(QLatin1StringView(agentproto::fields::kSize)).toDouble());
        e.type = f.value(QLatin1StringView(agentproto::fields::kType)).toString();
        e.linkTarget = f.value(QLatin1StringView(agentproto::fields::kTarget)).toString();
        e.mtimeMs = qint64(f.value(QLatin1StringView(agentproto::fields::kMtimeMs)).toDouble());
        e.nameNotUtf8 = f.value(QLatin1StringView(agentproto::fields::kNameNotUtf8)).toBool();
        const QString base = e.root == QLatin1StringView(agentproto::kRootRunDir) ? l.runDir : l.workdir;
        e.absolutePath = base + u'/' + e.path;
        l.files.append(e);
    }
    return l;
}

} // namespace ty
