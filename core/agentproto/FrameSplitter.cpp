#include "FrameSplitter.h"

#include <algorithm>

namespace ty::agentproto {

FrameSplitter::Piece FrameSplitter::next(std::string_view input)
{
    m_line = {};
    if (hasError())
        return Piece{Kind::Error};
    if (m_payloadLeft > 0) {
        if (input.empty())
            return Piece{};
        const std::size_t n = std::size_t(std::min<std::uint64_t>(m_payloadLeft, input.size()));
        m_payloadLeft -= n;
        return Piece{Kind::Payload, input.substr(0, n), n, m_payloadLeft == 0};
    }
    const std::size_t nl = input.find('\n', std::min(m_scanned, input.size()));
    if (nl == std::string_view::npos) {
        if (input.size() > kMaxLineBytes) {
            ++m_lineNo;
            setError("is longer than 1 MiB", input);
            return Piece{Kind::Error};
        }
        m_scanned = input.size();
        return Piece{};
    }
    m_scanned = 0;
    ++m_lineNo;
    const std::string_view line = input.substr(0, nl);
    if (line.size() > kMaxLineBytes) {
        setError("is longer than 1 MiB", line);
        return Piece{Kind::Error};
    }
    m_line = line;
    return Piece{Kind::Header, line, nl + 1};
}

void FrameSplitter::fail(std::string_view what)
{
    if (!hasError())
        setError(what, m_line);
}

void FrameSplitter::setError(std::string_view what, std::string_view line)
{
    const std::string_view quote = line.substr(0, kQuotedLineBytes);
    m_error = "protocol error: line ";
    m_error += std::to_string(m_lineNo);
    m_error += ' ';
    m_error += what;
    m_error += ": ";
    m_error += quote;
    m_quoteSize = quote.size();
}

std::string_view FrameSplitter::errorQuote() const
{
    return std::string_view(m_error).substr(m_error.size() - m_quoteSize);
}

void FrameSplitter::reset()
{
    *this = FrameSplitter();
}

} // namespace ty::agentproto
