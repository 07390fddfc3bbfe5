#include "FailureKind.h"

#include "EnumNames.h"

#include <array>

namespace ty {
namespace {
constexpr std::array<EnumName<FailureKind>, 14> kNames{{
        {FailureKind::None, u"", u""},
        {FailureKind::ExitCode, u"exit_code", u"exit code"},
        {FailureKind::Signal, u"signal", u"signal"},
        {FailureKind::OomKilled, u"oom_killed", u"OOM killer"},
        {FailureKind::CudaOutOfMemory, u"cuda_oom", u"CUDA OOM"},
        {FailureKind::PythonTraceback, u"python_traceback", u"traceback"},
        {FailureKind::NcclError, u"nccl_error", u"NCCL"},
        {FailureKind::TimeLimit, u"time_limit", u"time limit"},
        {FailureKind::NodeLost, u"node_lost", u"node lost"},
        {FailureKind::Preempted, u"preempted", u"preempted"},
        {FailureKind::Cancelled, u"cancelled", u"cancelled"},
        {FailureKind::StartFailed, u"start_failed", u"start failed"},
        {FailureKind::Unschedulable, u"unschedulable", u"unschedulable"},
        {FailureKind::Other, u"other", u"other"},
}};
} // namespace

QString failureKindName(FailureKind kind)
{
    return enumName(kNames, kind);
}

std::optional<FailureKind> failureKindFromName(QStringView name)
{
    return enumFromName(kNames, name);
}

QString failureKindLabel(FailureKind kind)
{
    return enumLabel(kNames, kind);
}

} // namespace ty
