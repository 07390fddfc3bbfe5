// AgentFrameDecoder: whole input vs random pieces give the same frames and error.
#include "FuzzCommon.h"
#include "core/nodes/AgentFrameDecoder.h"

#include <cstdint>

using namespace ty;

namespace {

QList<AgentFrame> decode(const QList<QByteArrayView>& parts, QString& error)
{
    AgentFrameDecoder d;
    QList<AgentFrame> out;
    for (QByteArrayView p : parts) {
        d.feed(p.toByteArray());
        while (std::optional<AgentFrame> f = d.next())
            out.append(std::move(*f));
    }
    error = d.error();
    return out;
}

} // namespace

TRAINYARD_FUZZ_TARGET(agent_frames)
{
    const QByteArrayView data(reinterpret_cast<const char*>(bytes), qsizetype(size));
    QString e1, e2;
    const QList<AgentFrame> whole = decode({data}, e1);
    const QList<AgentFrame> split = decode(fuzz::pieces(data, unsigned(size) * 3u), e2);
    if (whole.size() != split.size() || e1 != e2)
        fuzz::invariantBroken("AgentFrameDecoder: split input gave a different result");
    for (qsizetype i = 0; i < whole.size(); ++i) {
        if (whole[i].header != split[i].header || whole[i].payload != split[i].payload)
            fuzz::invariantBroken("AgentFrameDecoder: split input gave a different frame");
    }
    return 0;
}
