#pragma once

// The `read_file` request of the agent protocol (app/agent/PROTOCOL.md): bytes
// of a file a run wrote into its workdir or run directory (metric files), from
// an offset. Sizes and offsets in bytes, times ms since the Unix epoch (UTC).

#include "core/agentproto/Fields.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace ty {

struct AgentFileChunk {
    QString path;       // relative to the root, as requested
    qint64 size = 0;    // the file's size when it was read
    qint64 mtimeMs = 0; // its modification time then
    qint64 offset = 0;  // where `data` starts
    QByteArray data;    // at most the requested maximum (256 KiB); empty at or past the end
};

inline AgentFileChunk agentFileChunkFromJson(const QJsonObject& o)
{
    AgentFileChunk c;
    c.path = o.value(QLatin1StringView(agentproto::fields::kPath)).toString();
    c.size = o.value(QLatin1StringView(agentproto::fields::kSize)).toInteger();
    c.mtimeMs = o.value(QLatin1StringView(agentproto::fields::kMtimeMs)).toInteger();
    c.offset = o.value(QLatin1StringView(agentproto::fields::kOffset)).toInteger();
    c.data = QByteArray::fromBase64(o.value(QLatin1StringView(agentproto::fields::kData)).toString().toLatin1());
    return c;
}

} // namespace ty
