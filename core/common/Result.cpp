#include "Result.h"

#include <array>
#include <utility>

namespace ty {

namespace {
constexpr std::array<std::pair<ErrorKind, const char*>, 14> kNames{{
        {ErrorKind::Unspecified, "unspecified"},
        {ErrorKind::InvalidInput, "invalid_input"},
        {ErrorKind::NotFound, "not_found"},
        {ErrorKind::Storage, "storage"},
        {ErrorKind::ReadOnly, "read_only"},
        {ErrorKind::Damaged, "damaged"},
        {ErrorKind::Unreachable, "unreachable"},
        {ErrorKind::HostKeyUnknown, "host_key_unknown"},
        {ErrorKind::HostKeyChanged, "host_key_changed"},
        {ErrorKind::Authentication, "authentication"},
        {ErrorKind::Refused, "refused"},
        {ErrorKind::ReplyLost, "reply_lost"},
        {ErrorKind::GpuClaimed, "gpu_claimed"},
        {ErrorKind::Version, "version"},
}};
} // namespace

QString errorKindName(ErrorKind kind)
{
    for (const auto& [k, name] : kNames)
        if (k == kind)
            return QString::fromLatin1(name);
    return QStringLiteral("unspecified");
}

ErrorKind errorKindFromName(const QString& name)
{
    for (const auto& [k, n] : kNames)
        if (name == QLatin1StringView(n))
            return k;
    return ErrorKind::Unspecified;
}

} // namespace ty
