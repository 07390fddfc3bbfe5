#include "RetryClass.h"

#include <array>

namespace ty {
namespace {
struct Names {
    RetryClass cls;
    const char16_t* name;
    const char16_t* label;
};
constexpr std::array<Names, 11> kNames{{
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
    for (const Names& n : kNames)
        if (n.cls == cls)
            return QString::fromUtf16(n.name);
    return {};
}

std::optional<RetryClass> retryClassFromName(QStringView name)
{
    for (const Names& n : kNames)
        if (name == QStringView(n.name))
            return n.cls;
    return std::nullopt;
}

QStringList retryClassNames()
{
    QStringList out;
    for (const Names& n : kNames)
        out << QString::fromUtf16(n.name);
    return out;
}

QString retryClassLabel(RetryClass cls)
{
    for (const Names& n : kNames)
        if (n.cls == cls)
            return QString::fromUtf16(n.label);
    return {};
}

} // namespace ty
