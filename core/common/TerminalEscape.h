#pragma once

#include <QString>

namespace ty {

// A stored user string (a run or node name, a tag, a param, a command, a
// notice, a file name from a node) made safe to print as part of one line on
// a terminal, C-style as `ls -b` does: control characters (C0, DEL and C1:
// a newline splitting one name over two lines, an escape sequence such as
// ESC ] 0;title BEL driving the terminal), line and paragraph separators,
// bidi overrides and marks, and invisible zero-width characters
// (U+200B-200F, U+FEFF) become \n, \t, \r, \e, \xHH or \uHHHH; a backslash
// becomes \\ so every string reads back one way. Others are kept. Pure.
QString escapeForTerminal(const QString& text);

} // namespace ty
