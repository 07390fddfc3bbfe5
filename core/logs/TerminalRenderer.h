#pragma once

#include "ConsoleLine.h"

#include <QByteArrayView>
#include <QHash>
#include <QList>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ty {

// xterm's default palette as 0xAARRGGBB (opaque): 0-15 the 16 colours of
// xterm's defaults (SGR 30-37 are 0-7, 90-97 are 8-15), 16-231 the 6x6x6
// cube, 232-255 the greys; 0 for any other index. The colours spans carry.
quint32 paletteColour(int index);

// Turns a raw console byte stream (a run's merged stdout/stderr, exactly as
// written) into the rows a terminal would show, the way `cat FILE` in a tmux
// pane of the same width renders it (tests/core/logs/test_terminal_renderer_tmux
// compares against tmux 3.3a).
//
// Model: a screen of `liveRows` rows (the "live region") with a cursor, like a
// terminal of that height. `\n` behaves as CR+LF (a pty's ONLCR), and at the
// bottom row scrolls: the top row leaves the live region and is *committed*
// -- no cursor movement can reach it any more (cursor-up, CUP etc. are clamped
// to the live region, exactly as a terminal clamps them to its screen).
// commitAboveCursor() lets a caller commit early after the stream went quiet.
//
// Handled: printable UTF-8 (wide characters take two columns, zero-width ones
// join the previous cell), \r, \n, \b (with tmux's reverse wrap), \t (8-column
// stops), ESC[K/0K/1K/2K, ESC[J (0/1/2; 2, and 0 from the top left corner,
// first commit every row ever written to, blank or not, as tmux's
// scroll-on-clear), cursor movement A B C D E F G H f d ` a e, ESC[X/P/@,
// ESC[L/M (insert/delete line), ESC[S/T (scroll up/down the whole live
// screen; scrolled-up rows are committed, as tmux puts them in its
// history), ESC[b (repeat), ESC 7/8, ESC[s/u (a saved cursor keeps its
// screen row when the screen scrolls, as tmux's does), ESC D/E/M, SGR (bold,
// faint, italic, underline, inverse, strike, 16/256/truecolour with ';' or
// ':' separators). Soft-wrap marks come and go as tmux's do: an erase of a
// whole row takes its own mark off and that of the row above, and so do
// inserting, deleting and scrolling rows down for the row above where they
// move (grid_clear_lines, grid_move_lines) -- what a later backspace's
// reverse wrap sees.
// OSC (titles, OSC 8 hyperlinks: link dropped, text kept), DCS/SOS/PM/APC
// strings, tmux's ESC k rename, the other private-mode CSIs and every other
// escape are consumed and ignored.
//
// Alternate screen (ESC[?1049h/l, ?1047h/l, ?47h/l, as tmux 3.3a's
// screen_alternate_on/off do them): entering shows a blank screen of
// `liveRows` rows, the cursor where it was (?1049 first saves the cursor
// and its style, in a slot of its own, not ESC 7's); entering again while
// on it does nothing. Leaving brings back the main screen's rows exactly as
// they were; ?1049l also moves the cursor back to where ?1049h saved it
// (even when not on the alternate screen, as tmux does), ?47l/?1047l leave
// it where it is; either way a column past the last is clamped to the last.
// While on the alternate screen:
// - pendingLines() are its rows (what tmux's capture-pane shows below the
//   history), the committed rows (history) stay as they were;
// - nothing on it is ever committed: rows that scroll off its top (line
//   feed, ESC[S, ESC D) and ESC[2J's rows are dropped, as tmux keeps none
//   of the alternate screen in its history; a run's console history holds
//   only the main screen (a `watch` or full-screen rich Live is shown live,
//   and leaves no trace once it exits);
// - commitSettledRows() and commitAboveCursor() commit nothing (the main
//   screen's rows wait, hidden, until it is back), and pendingStartOffset()
//   is the main screen's first row's offset, or that of the ESC that
//   entered the alternate screen if the main screen is blank, so a consumer
//   that restarts rendering there enters it again;
// - finish() leaves it first (as ?1047l), so the main screen's rows are
//   what gets committed and the alternate screen's last frame is dropped.
// ESC[?1048h/l save and restore the cursor as ESC 7 / ESC 8 do.
// Scroll regions (DECSTBM, ESC[r) are not supported: ignored.
//
// Deliberate differences from tmux 3.3a (tests/core/logs/
// test_terminal_renderer_tmux says which it leaves out and why): ?1048 and
// HPR/VPR (ESC[a, ESC[e) work as in xterm (tmux ignores them); ESC[n@
// blanks the n columns it inserts (tmux leaves old cells in place when n is
// more than half of the rest of the row); writing over the right half of a
// wide character always clears it (tmux sometimes does not); a committed
// row keeps its wrap mark where tmux would take it off later
// (committedWrapsKept()); erased cells at the end of a wrapped row are not
// part of its text (tmux's capture-pane -J shows them as spaces).
//
// Where a string ends: as tmux 3.3a's input.c state tables say, OSC at BEL,
// ST (ESC \), any other ESC (which starts a new sequence), CAN or SUB;
// SOS/PM/APC/ESC k and a DCS before its final byte likewise but not at BEL;
// a DCS's data after its final byte only at ESC \ (CAN, SUB and other
// ESCs are data there). tmux bounds a string that never ends only by time
// (input_timer_callback: back to ground after 5 s; its 1 MiB
// INPUT_BUF_LIMIT just stops storing), which a byte stream cannot replay.
// The renderer's deliberate difference: a line feed also ends every string
// (and then moves the cursor as usual), so a stray ESC P, ESC ] or ESC _
// costs the rest of its own line, never the lines after it. No legitimate
// string a training run prints (titles, hyperlinks, tmux passthrough, kitty
// graphics in base64) holds a line feed.
// Invalid UTF-8 gives one U+FFFD per maximal invalid subsequence (WHATWG /
// Unicode "maximal subpart" rule; tmux drops such bytes instead). Other C0/C1
// controls are ignored.
//
// Width: `width` > 0 wraps at that many columns (rows are physical rows, the
// wrapped one has ConsoleLine::wrapped set); 0 means unlimited (one row per
// logical line, nothing wraps). Rows longer than `maxLineChars` columns keep
// their first maxLineChars columns, with truncated=true and fullLength set;
// the rest is counted, never stored, so a 10 MB line costs O(n) time and
// O(maxLineChars) memory.
//
// Any split of the stream over feed() calls gives the same result. Not thread
// safe: use from one thread at a time. No Qt event loop needed.
class TerminalRenderer final {
public:
    explicit TerminalRenderer(int width = 0, int maxLineChars = 16384, int liveRows = 64);
    ~TerminalRenderer();
    TerminalRenderer(const TerminalRenderer&) = delete;
    TerminalRenderer& operator=(const TerminalRenderer&) = delete;

    // Consumes the next bytes of the stream.
    void feed(QByteArrayView bytes);

    // Rows that became final since the last call, in order.
    QList<ConsoleLine> takeCommitted();
    // Number of rows waiting in takeCommitted() (cheap).
    qsizetype committedCount() const { return m_committed.size(); }

    // Receives each row as it is committed, in order: inside feed(),
    // commitSettledRows(), commitAboveCursor() and finish().
    using LineSink = std::function<void(const ConsoleLine&)>;
    // With a sink set, committed rows go to it instead of to takeCommitted(),
    // and the ConsoleLine it is handed is one object refilled for every row:
    // no heap allocation per row once its buffers have grown (a consumer that
    // keeps a line copies it; the text is then shared, and the next row
    // detaches). The same lines as takeCommitted() gives. A sink must not
    // call back into this renderer. Empty: back to takeCommitted().
    void setLineSink(LineSink sink) { m_sink = std::move(sink); }

    // Rows still in the live region, top to bottom (e.g. a tqdm bar being
    // redrawn); trailing empty rows below the cursor are left out.
    QList<ConsoleLine> pendingLines() const;
    // The byteOffset of pendingLines().front(), or -1 when pendingLines()
    // would be empty; builds no text (cheap enough to call per feed()).
    qint64 pendingStartOffset() const;

    // Commits the rows further above the cursor than the stream has ever
    // moved it up (cursor-up, reverse index, absolute positioning, restore,
    // reverse wrap): final in practice, so curves stay live while a progress
    // bar keeps redrawing below. A stream that later jumps further up than
    // ever before finds those rows gone (cursor clamps, as at a screen's top):
    // the only divergence from a terminal, and only for rows committed early.
    void commitSettledRows();

    // Plain rows (on by default): a line of printable ASCII written at the
    // start of an empty row in the default style is kept as its bytes rather
    // than a cell per character, and turned into cells only if the cursor
    // comes back to it. The same lines either way (tests compare the two);
    // off is for those tests and for benchmarks.
    void setPlainRows(bool on) { m_plainRows = on; }

    // Settle after feed (off by default): every feed() ends with
    // commitSettledRows(), as RunIngest needs after each chunk. With a line
    // sink set, this lets a plain line (see setPlainRows()) go from the fed
    // bytes straight to the sink when the rest of those bytes can no longer
    // move the cursor up to it (no ESC or backspace follows) and enough line
    // feeds follow to settle it by the end of the feed: no row is built for
    // it. The same lines, pending lines and offsets as feed() followed by
    // commitSettledRows() without it (tests compare the two).
    void setSettleAfterFeed(bool on) { m_settleAfterFeed = on; }
    // Lines the fast path above handed to the sink so far (for tests).
    qint64 plainLinesSunk() const { return m_plainLinesSunk; }

    // How often tmux would have taken the soft-wrap mark off the last
    // committed row (an erase, insert, delete or scroll at the screen's top
    // row: its grid_clear_lines / grid_move_lines), which the renderer, having
    // handed that row on, keeps (for tests comparing wrapped rows with tmux).
    qint64 committedWrapsKept() const { return m_committedWrapsKept; }

    // Commits every row above the cursor's row (e.g. once the stream has been
    // quiet for a while). Afterwards cursor-up stops at the cursor's current row.
    void commitAboveCursor();

    // End of stream: an unfinished UTF-8 sequence becomes U+FFFD, every live
    // row is committed (trailing empty rows dropped) and the renderer is reset
    // to an empty screen (the byte offset keeps counting).
    void finish();

    // Total bytes fed so far.
    qint64 bytesFed() const { return m_offset; }

    int width() const { return m_width; }

private:
    struct Cell {
        char32_t cp; // 0 = blank (never written or erased), kWideTail = right half of a wide char
        quint32 style;
    };
    static void fillAsciiCells(Cell* cells, const unsigned char* bytes, size_t n, quint32 style);
    static bool narrowUsualCells(const Cell* cells, qint64 n, char16_t* out);
    // Leaves a trivially constructible element uninitialised on a value-less
    // resize(), so the ASCII path grows a row and writes its cells once (a
    // zero fill first cost as much as the copy). Every other growth passes a
    // value (Cell{0, 0}).
    template <typename T> struct DefaultInitAllocator : std::allocator<T> {
        template <typename U> struct rebind {
            using other = DefaultInitAllocator<U>;
        };
        using std::allocator<T>::allocator;
        template <typename U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
        template <typename U, typename... Args> void construct(U* p, Args&&... args)
        {
            ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
        }
    };
    struct Row {
        std::vector<Cell, DefaultInitAllocator<Cell>> cells;
        std::string plain; // a plain row's bytes (then `cells` is empty; see printPlainLine())
        qint64 byteOffset = 0;
        qint64 fullLength = 0; // columns reached, including those past maxLineChars
        bool wrapped = false;
        bool used
                = false; // tmux's cellused != 0: written to or moved within since last cleared whole (ESC[2J moves it to the history)
        std::unique_ptr<std::unordered_map<int, std::u32string>> combining; // rare: zero-width marks per column
        void reset(qint64 offset);
    };
    // The live region's rows, top first: a ring over a vector. Committing
    // the top row and adding one at the bottom (once per line of a long
    // run) moves no row, and a slot keeps its row's buffers for the next
    // row placed there (the caller reset()s it). Holds at most as many
    // slots as the region ever had rows.
    class RowRing {
    public:
        int size() const { return m_size; }
        bool empty() const { return m_size == 0; }
        Row& operator[](int i) { return m_slots[size_t((m_head + i) & m_mask)]; }
        const Row& operator[](int i) const { return m_slots[size_t((m_head + i) & m_mask)]; }
        Row& front() { return (*this)[0]; }
        Row& pushBack(); // the new bottom slot, as its last row left it
        void popFront()
        {
            m_head = (m_head + 1) & m_mask;
            --m_size;
        }
        void clear() { m_size = 0; }

    private:
        std::vector<Row> m_slots = std::vector<Row>(8);
        int m_mask = 7; // m_slots.size() - 1, a power of two less one
        int m_head = 0;
        int m_size = 0;
    };
    struct Style {
        quint32 fg = 0;
        quint32 bg = 0;
        quint8 flags = 0;
        friend bool operator==(const Style&, const Style&) = default;
    };
    friend size_t qHash(const Style& s, size_t seed) noexcept;

    enum class State : quint8 {
        Ground,
        Escape,
        EscapeIntermediate,
        Csi,
        CsiIgnore,
        Osc,
        OscEscape,
        String,
        StringEscape,
        DcsEntry,
        DcsPassthrough,
        DcsEscape,
    };
    enum class DcsPhase : quint8 {
        Enter,
        Parameter,
        Intermediate
    }; // tmux's dcs_enter, dcs_parameter, dcs_intermediate

    static constexpr char32_t kWideTail = 0xFFFFFFFFu;
    static constexpr int kMaxParams = 32;

    // stream processing
    void processByte(unsigned char b, qint64 offset);
    // [p, q): a run of printable ASCII (printableRunEnd() in the .cpp); `end`: the fed bytes' end.
    void printAsciiRun(const unsigned char* p, const unsigned char* q);
    bool printPlainLine(const unsigned char* p, const unsigned char* q, const unsigned char* end);
    // What sinkPlainLines() needs to know about the rest of one feed()'s
    // bytes, found once per feed() when first needed.
    struct FeedLookahead {
        const unsigned char* quietFrom = nullptr; // after the last ESC or '\b' (nothing moves up from here on)
        const unsigned char* holdAt = nullptr;    // a line ending at or after this is not settled by the feed's end
    };
    // Settle-after-feed's fast path: the plain lines from p handed to the
    // sink directly; returns where they end (p when none could be).
    // `pOffset`: the stream offset of p.
    const unsigned char* sinkPlainLines(
            const unsigned char* p, const unsigned char* end, qint64 pOffset, FeedLookahead& ahead);
    void printCodepoint(char32_t cp);
    void putCell(char32_t cp, int w);
    void execControl(unsigned char b);
    void escDispatch(unsigned char final);
    void csiDispatch(unsigned char final);
    void sgr();
    void flushBadUtf8();

    // screen operations
    Row& cursorRow();
    Row& rowAt(int index); // a plain row turned into cells: every change goes through here
    void materialize(Row& row);
    void lineFeed(bool wrapped);
    void newRowAtBottom();
    void commitFront(); // the top row to the history (dropped on the alternate screen)
    void commitEarly(); // commitFront() of a row still on tmux's screen: rows' indices shift up by one
    void scrollUp();    // the screen's top row leaves it (line feed at the bottom, ESC[S)
    void setPrivateMode(int mode, bool on); // ESC[?...h / l
    void enterAltScreen(bool saveCursor);
    void leaveAltScreen(bool restoreCursor);
    void eraseCells(Row& row, qint64 from, qint64 to); // [from, to)
    // tmux's grid_clear_lines / grid_move_lines at row `rowIndex`: the row
    // above it is no longer soft-wrapped (what capture-pane -J and a reverse
    // wrap see); `whole`: that row was cleared whole, so no longer used
    void lineCleared(int rowIndex, bool whole = false);
    void eraseRowsBelow(int rowIndex);
    void eraseRowsAbove(int rowIndex);
    void insertRows(int at, int n); // IL/SD: n blank rows at `at`, those pushed past the screen's bottom dropped
    void deleteRows(int at, int n); // DL: n rows from `at` removed, blank rows at the bottom
    void clampCol();
    void moveToRow(int row); // any vertical move; records upward reach
    int param(int i, int def) const;
    quint32 styleId(const Style& s);
    ConsoleLine toLine(const Row& row) const;
    void fillLine(const Row& row, ConsoleLine& line) const; // every field set, line's buffers reused
    static bool isBlankRow(const Row& row);

    const int m_width;
    const int m_maxLineChars;
    const int m_liveRows;
    const int m_storeLimit; // cells stored per row: min(width or inf, maxLineChars)
    bool m_plainRows = true;
    bool m_settleAfterFeed = false;
    qint64 m_plainLinesSunk = 0;
    qint64 m_committedWrapsKept = 0;
    bool m_lastCommittedWrapped = false;

    RowRing m_screen; // live region, m_screen[0] is its top row
    QList<ConsoleLine> m_committed;
    LineSink m_sink;
    ConsoleLine m_sinkLine; // refilled for every row handed to m_sink

    int m_row = 0;
    qint64 m_col = 0;
    int m_maxUpReach = 0; // the furthest the cursor was ever moved up, in rows
    // Rows committed early that a terminal would still show above the live
    // region (tmux's cursor row is m_row + m_screenOffset, at most
    // liveRows - 1): saved cursors keep screen rows, as tmux's do, so that
    // scrolling leaves them in place and early commits do not move them.
    int m_screenOffset = 0;
    int m_savedRow = 0; // ESC 7's, a screen row
    qint64 m_savedCol = 0;
    quint32 m_savedStyle = 0;

    // The alternate screen (see the class comment): while it is shown,
    // m_screen holds its rows and m_mainScreen the main screen's.
    bool m_altScreen = false;
    RowRing m_mainScreen;
    int m_mainRow = 0;         // the main screen's cursor row when it was left
    int m_mainUpReach = 0;     // and its m_maxUpReach (moves on the alternate screen do not count)
    int m_mainOffset = 0;      // and its m_screenOffset (the alternate screen's is 0)
    qint64 m_altEnteredAt = 0; // offset of the ESC that entered the alternate screen
    // ?1049h's saved cursor (tmux's screen saved_cx/cy/cell): none until the first ?1049h
    bool m_altCursorSaved = false;
    int m_altSavedRow = 0; // a screen row
    qint64 m_altSavedCol = 0;
    quint32 m_altSavedStyle = 0;
    qint64 m_csiStart = 0; // offset of the ESC of the CSI being parsed

    Style m_style;
    quint32 m_styleId = 0;
    std::vector<Style> m_styles;
    QHash<Style, quint32> m_styleIds;

    qint64 m_offset = 0;  // bytes fed so far
    qint64 m_curByte = 0; // offset of the byte being processed

    State m_state = State::Ground;
    // UTF-8 decoder (WHATWG)
    char32_t m_utfCp = 0;
    int m_utfNeed = 0;
    unsigned char m_utfLower = 0x80;
    unsigned char m_utfUpper = 0xBF;
    // CSI
    int m_params[kMaxParams] = {};
    bool m_subParam[kMaxParams] = {}; // param i was introduced by ':'
    int m_paramCount = 0;
    bool m_paramHasDigit = false;
    unsigned char m_private = 0; // '<', '=', '>', '?' or 0
    unsigned char m_intermediate = 0;
    DcsPhase m_dcsPhase = DcsPhase::Enter;
    char m_lastAscii = 0; // the last printed character for REP (CSI b), 0 after a control or escape (tmux's ictx->last)
};

} // namespace ty
