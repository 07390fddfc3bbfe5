#pragma once

namespace ty {

// Display width in terminal columns of one Unicode scalar value, as glibc's
// wcwidth() reports it in a UTF-8 locale (tmux on Debian 12 uses exactly that):
// 0 for combining marks and other zero-width characters, 2 for East Asian
// wide/fullwidth characters and emoji with emoji presentation, 1 otherwise.
// Code points glibc calls non-printable (unassigned, C1 controls) return 1,
// except U+0000..U+001F, U+007F..U+009F which return -1 (controls).
// Table generated from glibc 2.36 (Unicode 15.0) by iterating wcwidth() over
// every code point; tests/core/logs/TestCharWidth.cpp checks it against the
// running libc.
int charWidth(char32_t cp) noexcept;

} // namespace ty
