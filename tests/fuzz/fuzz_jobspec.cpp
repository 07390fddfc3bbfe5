// parseJobSpec on arbitrary YAML text (with and without a param override).
#include "FuzzCommon.h"
#include "core/spec/JobSpec.h"

#include <cstdint>

using namespace ty;

TRAINYARD_FUZZ_TARGET(jobspec)
{
    const QString text = QString::fromUtf8(reinterpret_cast<const char*>(bytes), qsizetype(size));
    Result<JobSpec> spec = parseJobSpec(text, QStringLiteral("<fuzz>"), QStringLiteral("/tmp"));
    if (spec) {
        // A valid spec must survive toYaml() and parse again.
        (void)toYaml(*spec);
        if (spec->argv.isEmpty())
            fuzz::invariantBroken("parseJobSpec: a valid spec with an empty argv");
    }
    if (size > 0 && bytes[0] % 2)
        (void)parseJobSpec(text, QStringLiteral("<fuzz>"), QStringLiteral("/tmp"),
                {{QStringLiteral("lr"), QStringLiteral("0.1")}});
    (void)parseSizeMiB(text);
    (void)parseDurationSec(text);
    return 0;
}
