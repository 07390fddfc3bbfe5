#include "HostKeyPolicy.h"

namespace ty {

StrictHostKeyChecking parseStrictHostKeyChecking(const QString& value)
{
    const QString v = value.trimmed().toLower();
    if (v == u"true" || v == u"yes")
        return StrictHostKeyChecking::Yes;
    if (v == u"false" || v == u"no" || v == u"off")
        return StrictHostKeyChecking::No;
    if (v == u"accept-new")
        return StrictHostKeyChecking::AcceptNew;
    return StrictHostKeyChecking::Ask;
}

QString strictHostKeyCheckingName(StrictHostKeyChecking s)
{
    switch (s) {
    case StrictHostKeyChecking::Yes: return QStringLiteral("yes");
    case StrictHostKeyChecking::AcceptNew: return QStringLiteral("accept-new");
    case StrictHostKeyChecking::No: return QStringLiteral("no");
    case StrictHostKeyChecking::Ask: break;
    }
    return QStringLiteral("ask");
}

HostKeyDecision decideHostKey(HostKeyState state, StrictHostKeyChecking strict, bool userAcceptsNew)
{
    const bool addsNew = strict == StrictHostKeyChecking::AcceptNew || strict == StrictHostKeyChecking::No;
    switch (state) {
    case HostKeyState::Known: return HostKeyDecision::Accepted;
    case HostKeyState::Unknown:
        return addsNew || userAcceptsNew ? HostKeyDecision::Added : HostKeyDecision::RefusedUnknown;
    case HostKeyState::OtherType: return addsNew ? HostKeyDecision::Added : HostKeyDecision::RefusedOtherType;
    case HostKeyState::Changed:
        return strict == StrictHostKeyChecking::No ? HostKeyDecision::AcceptedChanged : HostKeyDecision::RefusedChanged;
    }
    return HostKeyDecision::RefusedChanged;
}

} // namespace ty
