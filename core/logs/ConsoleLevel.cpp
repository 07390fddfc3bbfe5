#include "ConsoleLevel.h"

#include "FailureDetector.h"

#include <QRegularExpression>

namespace ty {

namespace {

bool isWordChar(QChar c)
{
    return c.isLetterOrNumber() || c == u'_';
}

// `needle` somewhere in `line`; with `boundary`, only where the character
// before it is not a word character (`lettersOnly`: not a letter).
bool hasToken(QStringView line, QStringView needle, bool boundary, bool lettersOnly = false)
{
    qsizetype from = 0;
    for (;;) {
        const qsizetype at = line.indexOf(needle, from);
        if (at < 0)
            return false;
        if (!boundary || at == 0)
            return true;
        const QChar before = line.at(at - 1);
        if (lettersOnly ? !before.isLetter() : !isWordChar(before))
            return true;
        from = at + 1;
    }
}

bool isPythonWarningLocation(QStringView line)
{
    if (!line.contains(u".py:"))
        return false;
    static const QRegularExpression re(QStringLiteral(R"(^\S*\.py:\d+: )"));
    return re.match(line.toString()).hasMatch(); // QRegularExpression::matchView needs Qt 6.5; Debian 12 has 6.4
}

} // namespace

ConsoleLevel ConsoleLevelClassifier::lineLevel(QStringView line)
{
    if (hasToken(line, u"Error", false) || hasToken(line, u"ERROR", true, true) || hasToken(line, u"error:", true))
        return ConsoleLevel::Error;
    if (line.contains(u"CUDA") || line.contains(u"OutOfMemory") || line.contains(u"CUBLAS")) {
        if (FailureDetector::isCudaOutOfMemoryLine(line))
            return ConsoleLevel::Error;
    }
    if (line.contains(u"NCCL") || line.contains(u"nccl")) {
        if (FailureDetector::isNcclErrorLine(line))
            return ConsoleLevel::Error;
    }
    if (line.contains(u"Killed") && FailureDetector::isKilledLine(line))
        return ConsoleLevel::Error;
    if (hasToken(line, u"Warning", false) || hasToken(line, u"WARN", true, true) || hasToken(line, u"warning:", true)
            || isPythonWarningLocation(line))
        return ConsoleLevel::Warning;
    return ConsoleLevel::Info;
}

ConsoleLevel ConsoleLevelClassifier::classify(QStringView line)
{
    if (line.startsWith(u"Traceback (most recent call last):")
            || line.startsWith(u"During handling of the above exception, another exception occurred:")
            || line.startsWith(u"The above exception was the direct cause of the following exception:")) {
        // The chaining lines are followed by a blank line and the next header:
        // keep the block going through them.
        m_inTraceback = true;
        m_lastTraceback = true;
        return ConsoleLevel::Error;
    }
    if (m_inTraceback) {
        const bool indented = !line.isEmpty() && (line.front() == u' ' || line.front() == u'\t');
        if (!indented && !line.trimmed().isEmpty())
            m_inTraceback = false; // the exception line closes the block
        m_lastTraceback = true;
        return ConsoleLevel::Error;
    }
    m_lastTraceback = false;
    return lineLevel(line);
}

} // namespace ty
