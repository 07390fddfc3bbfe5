#pragma once

#include <QList>
#include <QString>

namespace ty {

// A run of styled text inside a ConsoleLine. `start`/`length` are in UTF-16
// code units of ConsoleLine::text. Colours are 0 for "terminal default", else
// 0xFF000000 | 0xRRGGBB (16/256-colour indices are mapped to xterm's default
// palette, see TerminalRenderer.cpp).
struct StyleSpan {
    enum Flag : quint8 {
        Bold = 0x01,
        Faint = 0x02,
        Italic = 0x04,
        Underline = 0x08,
        Inverse = 0x10,
        Strike = 0x20,
    };
    int start = 0;
    int length = 0;
    quint32 fg = 0;
    quint32 bg = 0;
    quint8 flags = 0;

    friend bool operator==(const StyleSpan&, const StyleSpan&) = default;
};

// One row as a terminal shows it: plain text (no escape sequences, never a
// control character) plus the styled runs.
struct ConsoleLine {
    QString text;
    QList<StyleSpan> spans;  // only runs whose style differs from the default
    qint64 byteOffset = 0;   // raw stream offset of the byte that started this row
    bool truncated = false;  // the row had more columns than maxLineChars; text holds the first ones
    qint64 fullLength = 0;   // columns the row really had (== text's width when !truncated)
    bool wrapped = false;    // width > 0 only: the row was soft-wrapped, its text continues on the next row
    bool fromStderr = false; // some of the row's bytes came from the run's stderr (markStderrLines);
                             // the renderer never sets it
};

} // namespace ty
