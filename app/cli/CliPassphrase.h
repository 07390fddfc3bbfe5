#pragma once

#include "core/nodes/SshPassphraseProvider.h"

#include <memory>

namespace ty::cli {

// How trainyardctl asks for an SSH key's passphrase: the program in
// $TRAINYARD_ASKPASS (or $SSH_ASKPASS with SSH_ASKPASS_REQUIRE=force, as
// OpenSSH), which gets the prompt as its argument and prints the passphrase;
// else the controlling terminal (no echo). nullptr in batch mode (no
// controlling terminal): authentication then says that no passphrase came.
// The providers are called on the node's SSH thread.
std::shared_ptr<SshPassphraseProvider> passphraseProvider();

} // namespace ty::cli
