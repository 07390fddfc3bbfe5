#include "Run.h"

#include <array>
#include <utility>

namespace ty {
namespace {
constexpr std::array<std::pair<RunState, const char16_t*>, 8> kNames{{
        {RunState::Queued, u"queued"},
        {RunState::Held, u"held"},
        {RunState::Starting, u"starting"},
        {RunState::Running, u"running"},
        {RunState::Succeeded, u"succeeded"},
        {RunState::Failed, u"failed"},
        {RunState::Cancelled, u"cancelled"},
        {RunState::Unknown, u"unknown"},
}};
} // namespace

QString runStateName(RunState s)
{
    for (const auto& [state, name] : kNames)
        if (state == s)
            return QString::fromUtf16(name);
    return QStringLiteral("unknown");
}

std::optional<RunState> runStateFromName(QStringView name)
{
    for (const auto& [state, n] : kNames)
        if (name == QStringView(n))
            return state;
    return std::nullopt;
}

bool isTerminal(RunState s)
{
    return s == RunState::Succeeded || s == RunState::Failed || s == RunState::Cancelled;
}

std::optional<RunGroupMembership> membershipOf(const RunRecord& run, RunGroupKind kind)
{
    for (const RunGroupMembership& m : run.groups)
        if (m.kind == kind)
            return m;
    return std::nullopt;
}

RunGroupId groupIdOf(const RunRecord& run, RunGroupKind kind)
{
    const auto m = membershipOf(run, kind);
    return m ? m->group : 0;
}

} // namespace ty
