#include "RunTexts.h"

#include <QCoreApplication>

#include <array>
#include <utility>

namespace ty {
namespace {

// The source texts must stay equal to core's names (checked by test_run_texts).
constexpr std::array<std::pair<RunState, const char*>, 8> kStates{{
        {RunState::Queued, QT_TRANSLATE_NOOP("RunTexts", "queued")},
        {RunState::Held, QT_TRANSLATE_NOOP("RunTexts", "held")},
        {RunState::Starting, QT_TRANSLATE_NOOP("RunTexts", "starting")},
        {RunState::Running, QT_TRANSLATE_NOOP("RunTexts", "running")},
        {RunState::Succeeded, QT_TRANSLATE_NOOP("RunTexts", "succeeded")},
        {RunState::Failed, QT_TRANSLATE_NOOP("RunTexts", "failed")},
        {RunState::Cancelled, QT_TRANSLATE_NOOP("RunTexts", "cancelled")},
        {RunState::Unknown, QT_TRANSLATE_NOOP("RunTexts", "unknown")},
}};

constexpr std::array<std::pair<FailureKind, const char*>, 13> kKinds{{
        {FailureKind::ExitCode, QT_TRANSLATE_NOOP("RunTexts", "exit code")},
        {FailureKind::Signal, QT_TRANSLATE_NOOP("RunTexts", "signal")},
        {FailureKind::OomKilled, QT_TRANSLATE_NOOP("RunTexts", "OOM killer")},
        {FailureKind::CudaOutOfMemory, QT_TRANSLATE_NOOP("RunTexts", "CUDA OOM")},
        {FailureKind::PythonTraceback, QT_TRANSLATE_NOOP("RunTexts", "traceback")},
        {FailureKind::NcclError, QT_TRANSLATE_NOOP("RunTexts", "NCCL")},
        {FailureKind::TimeLimit, QT_TRANSLATE_NOOP("RunTexts", "time limit")},
        {FailureKind::NodeLost, QT_TRANSLATE_NOOP("RunTexts", "node lost")},
        {FailureKind::Cancelled, QT_TRANSLATE_NOOP("RunTexts", "cancelled")},
        {FailureKind::StartFailed, QT_TRANSLATE_NOOP("RunTexts", "start failed")},
        {FailureKind::Unschedulable, QT_TRANSLATE_NOOP("RunTexts", "unschedulable")},
        {FailureKind::Other, QT_TRANSLATE_NOOP("RunTexts", "other")},
        {FailureKind::Preempted, QT_TRANSLATE_NOOP("RunTexts", "preempted")},
}};

} // namespace

QString runStateText(RunState state)
{
    for (const auto& [s, text] : kStates)
        if (s == state)
            return QCoreApplication::translate("RunTexts", text);
    return runStateName(state);
}

QString failureKindText(FailureKind kind)
{
    for (const auto& [k, text] : kKinds)
        if (k == kind)
            return QCoreApplication::translate("RunTexts", text);
    return failureKindLabel(kind);
}

QString runStateCellText(RunState state, FailureKind kind)
{
    return state == RunState::Failed && kind != FailureKind::None
            ? QStringLiteral("%1 (%2)").arg(runStateText(state), failureKindText(kind))
            : runStateText(state);
}

QStringList runStateCellTexts()
{
    QStringList texts;
    for (const auto& [s, text] : kStates)
        texts << runStateCellText(s, FailureKind::None);
    for (const auto& [k, text] : kKinds)
        texts << runStateCellText(RunState::Failed, k);
    return texts;
}

} // namespace ty
