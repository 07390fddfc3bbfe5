#pragma once

#include "core/nodes/SshPassphraseProvider.h"

#include <memory>

namespace ty::cli {

// How trainyardctl asks what an SSH login needs: an SSH key's passphrase and
// the questions of a keyboard-interactive login (one-time codes). The
// program in $TRAINYARD_ASKPASS (or $SSH_ASKPASS with
// SSH_ASKPASS_REQUIRE=force, as OpenSSH) gets the prompt as its argument
// ("node: prompt", a login question with the server's name and instruction
// on lines before the prompt; one run per prompt) and prints the answer;
// else the controlling terminal: the server's name and instruction first,
// then each prompt, echo off for a passphrase and for a prompt the server
// marks secret. Server texts are printed escaped (TerminalEscape.h). nullptr
// in batch mode (no controlling terminal): authentication then says that
// nobody could answer. The providers are called on the node's SSH thread
// (or, for trainyardd's questions, on the thread of the ServiceClient).
std::shared_ptr<SshPassphraseProvider> passphraseProvider();

} // namespace ty::cli
