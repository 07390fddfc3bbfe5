#include "Run.h"

#include "EnumNames.h"

#include <array>

namespace ty {
namespace {
constexpr std::array<EnumName<RunState>, 8> kNames{{
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
    return enumName(kNames, s, QStringLiteral("unknown"));
}

std::optional<RunState> runStateFromName(QStringView name)
{
    return enumFromName(kNames, name);
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
