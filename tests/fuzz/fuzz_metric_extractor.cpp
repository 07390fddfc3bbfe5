// MetricExtractor: each input line through extract() (and parseValue on the
// whole input), with an optional custom rule taken from the first line.
#include "FuzzCommon.h"
#include "core/logs/MetricExtractor.h"

#include <cstdint>

using namespace ty;

TRAINYARD_FUZZ_TARGET(metric_extractor)
{
    const QString text = QString::fromUtf8(reinterpret_cast<const char*>(bytes), qsizetype(size));
    (void)MetricExtractor::parseValue(text);
    QList<MetricRule> rules;
    QStringView rest = text;
    if (size > 0 && bytes[0] == 'R') {
        // "R<regex>\n...": a spec rule (only when the regex is valid and has a value group).
        const qsizetype nl = text.indexOf(u'\n');
        if (nl > 1) {
            QRegularExpression re(text.mid(1, nl - 1));
            if (re.isValid() && re.namedCaptureGroups().contains(QStringLiteral("value")))
                rules.append(MetricRule{QStringLiteral("custom"), re});
            rest = QStringView(text).sliced(nl + 1);
        }
    }
    MetricExtractor ex(rules);
    for (QStringView line : rest.split(u'\n')) {
        for (const ExtractedMetric& m : ex.extract(line)) {
            if (m.key.isEmpty())
                fuzz::invariantBroken("MetricExtractor: empty key");
        }
    }
    return 0;
}
