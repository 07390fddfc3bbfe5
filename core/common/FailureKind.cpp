#include "FailureKind.h"

#include <array>

namespace ty {
namespace {
struct Names {
    FailureKind kind;
    const char16_t* name;
    const char16_t* label;
};
constexpr std::array<Names, 14> kNames{{
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
    for (const Names& n : kNames)
        if (n.kind == kind)
            return QString::fromUtf16(n.name);
    return {};
}

std::optional<FailureKind> failureKindFromName(QStringView name)
{
    for (const Names& n : kNames)
        if (name == QStringView(n.name))
            return n.kind;
    return std::nullopt;
}

QString failureKindLabel(FailureKind kind)
{
    for (const Names& n : kNames)
        if (n.kind == kind)
            return QString::fromUtf16(n.label);
    return {};
}

} // namespace ty
