#include "RetryClass.h"

#include "core/common/EnumNames.h"

#include <array>

namespace ty {
namespace {
constexpr std::array<EnumName<RetryClass>, 11> kNames{{
        {RetryClass::Succeeded, u"succeeded", u"succeeded"},
        {RetryClass::Failed, u"failed", u"failed"},
        {RetryClass::Signal, u"signal", u"killed by a signal"},
        {RetryClass::Oom, u"oom", u"OOM killer"},
        {RetryClass::CudaOom, u"cuda_oom", u"CUDA OOM"},
        {RetryClass::Nccl, u"nccl", u"NCCL error"},
        {RetryClass::Timeout, u"timeout", u"time limit"},
        {RetryClass::NodeLost, u"node_lost", u"node lost"},
        {RetryClass::Preempted, u"preempted", u"preempted"},
        {RetryClass::Cancelled, u"cancelled", u"cancelled"},
        {RetryClass::Unschedulable, u"unschedulable", u"unschedulable"},
}};
} // namespace

RetryClass retryClassOf(FailureKind kind)
{
    switch (kind) {
    case FailureKind::None: return RetryClass::Succeeded;
    case FailureKind::ExitCode:
    case FailureKind::PythonTraceback:
    case FailureKind::StartFailed:
    case FailureKind::Other: return RetryClass::Failed;
    case FailureKind::Signal: return RetryClass::Signal;
    case FailureKind::OomKilled: return RetryClass::Oom;
    case FailureKind::CudaOutOfMemory: return RetryClass::CudaOom;
    case FailureKind::NcclError: return RetryClass::Nccl;
    case FailureKind::TimeLimit: return RetryClass::Timeout;
    case FailureKind::NodeLost: return RetryClass::NodeLost;
    case FailureKind::Preempted: return RetryClass::Preempted;
    case FailureKind::Cancelled: return RetryClass::Cancelled;
    case FailureKind::Unschedulable: return RetryClass::Unschedulable;
    }
    return RetryClass::Failed; // not reached: every kind is named above (-Wswitch says when one is added)
}

bool isInfraRetryClass(RetryClass cls)
{
    return cls == RetryClass::NodeLost || cls == RetryClass::Preempted;
}

bool isNeverRetried(RetryClass cls)
{
    return cls == RetryClass::Succeeded || cls == RetryClass::Cancelled || cls == RetryClass::Unschedulable;
}

QString retryClassName(RetryClass cls)
{
    return enumName(kNames, cls);
}

std::optional<RetryClass> retryClassFromName(QStringView name)
{
    return enumFromName(kNames, name);
}

QStringList retryClassNames()
{
    QStringList out;
    for (const EnumName<RetryClass>& n : kNames)
        out << QString::fromUtf16(n.name);
    return out;
}

QString retryClassLabel(RetryClass cls)
{
    return enumLabel(kNames, cls);
}

} // namespace ty
