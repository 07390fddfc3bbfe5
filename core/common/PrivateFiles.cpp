#include "PrivateFiles.h"

#include <sys/stat.h>

namespace ty {
namespace {
bool g_saved = false;
mode_t g_inherited = 022;
} // namespace

void makeNewFilesPrivate()
{
    const mode_t old = ::umask(077);
    if (!g_saved) {
        g_inherited = old;
        g_saved = true;
    }
}

mode_t inheritedUmask()
{
    if (!g_saved) {
        const mode_t now = ::umask(077);
        ::umask(now);
        return now;
    }
    return g_inherited;
}

} // namespace ty
