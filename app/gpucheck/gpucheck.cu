// trainyard-gpucheck: proves which GPUs a run really got.
//
// Prints one JSON object per visible CUDA device on stdout (in CUDA's
// enumeration order, which under CUDA_DEVICE_ORDER=PCI_BUS_ID is the order of
// CUDA_VISIBLE_DEVICES), then keeps every device busy with a spinning kernel
// and an allocation for --seconds, so nvidia-smi / NVML see the process, its
// memory and full utilisation. Ends with {"done":true,...}.
//
//   trainyard-gpucheck [--seconds S] [--mem-mib M]
//
// Output lines (JSON, one object per line):
//   {"device":0,"uuid":"GPU-6f1a...","name":"NVIDIA H200","pci_bus_id":"0000:19:00.0",
//    "memory_total_mib":143771,"cuda_visible_devices":"2"}
//   {"done":true,"seconds":5.0,"kernels":1234}
// Exit status: 0 ok, 2 bad arguments, 3 no CUDA device or driver (the
// message on stderr says which, with CUDA's own error string).
//
// Depends on the CUDA runtime only (linked statically; needs the driver at run time).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

__global__ void spin(unsigned long long cycles, unsigned long long* sink)
{
    const unsigned long long start = clock64();
    unsigned long long x = threadIdx.x;
    while (clock64() - start < cycles)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    if (x == 42)  // never true in practice; keeps the loop from being optimised out
        *sink = x;
}

std::string uuidString(const cudaUUID_t& u)
{
    // nvidia-smi's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
    static const int groups[] = {4, 2, 2, 2, 6};
    std::string s = "GPU-";
    int byte = 0;
    for (int g = 0; g < 5; ++g) {
        if (g)
            s += '-';
        for (int i = 0; i < groups[g]; ++i, ++byte) {
            char hex[3];
            std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(u.bytes[byte]));
            s += hex;
        }
    }
    return s;
}

std::string jsonEscape(const char* in)
{
    std::string out;
    for (const char* p = in; *p; ++p) {
        const unsigned char c = static_cast<unsigned char>(*p);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

int usage(const char* why)
{
    std::fprintf(stderr, "trainyard-gpucheck: %s\nusage: trainyard-gpucheck [--seconds S] [--mem-mib M]\n", why);
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    double seconds = 5.0;
    long memMib = 256;
    for (int i = 1; i < argc; ++i) {
        const bool hasValue = i + 1 < argc;
        char* end = nullptr;
        if (!std::strcmp(argv[i], "--seconds") && hasValue) {
            seconds = std::strtod(argv[++i], &end);
            if (*end || seconds < 0 || seconds > 86400)
                return usage("--seconds wants a number from 0 to 86400");
        } else if (!std::strcmp(argv[i], "--mem-mib") && hasValue) {
            memMib = std::strtol(argv[++i], &end, 10);
            if (*end || memMib < 0 || memMib > (1L << 22))
                return usage("--mem-mib wants a whole number of MiB");
        } else {
            return usage((std::string("unknown or incomplete argument '") + argv[i] + "'").c_str());
        }
    }

    int count = 0;
    if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
        std::fprintf(stderr, "trainyard-gpucheck: no CUDA device usable: %s (%s)\n",
                     cudaGetErrorString(err), cudaGetErrorName(err));
        return 3;
    }
    if (count == 0) {
        std::fprintf(stderr, "trainyard-gpucheck: no CUDA device visible (CUDA_VISIBLE_DEVICES=%s)\n",
                     std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "<unset>");
        return 3;
    }

    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    std::vector<void*> buffers(count, nullptr);
    std::vector<unsigned long long*> sinks(count, nullptr);
    std::vector<long long> clockKhz(count, 1000000);
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            std::fprintf(stderr, "trainyard-gpucheck: device %d: cannot read its properties\n", d);
            return 3;
        }
        char bus[32] = {};
        cudaDeviceGetPCIBusId(bus, sizeof bus, d);
        int khz = 0;
        if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d) == cudaSuccess && khz > 0)
            clockKhz[d] = khz;
        std::printf("{\"device\":%d,\"uuid\":\"%s\",\"name\":\"%s\",\"pci_bus_id\":\"%s\","
                    "\"memory_total_mib\":%zu,\"cuda_visible_devices\":\"%s\"}\n",
                    d, uuidString(prop.uuid).c_str(), jsonEscape(prop.name).c_str(), bus,
                    prop.totalGlobalMem >> 20, visible ? jsonEscape(visible).c_str() : "");
        cudaSetDevice(d);
        if (memMib > 0 && cudaMalloc(&buffers[d], static_cast<size_t>(memMib) << 20) != cudaSuccess) {
            std::fprintf(stderr, "trainyard-gpucheck: device %d: cannot allocate %ld MiB\n", d, memMib);
            return 3;
        }
        if (buffers[d])
            cudaMemset(buffers[d], 0xA5, static_cast<size_t>(memMib) << 20);
        cudaMalloc(&sinks[d], sizeof(unsigned long long));
    }
    std::fflush(stdout);

    // Keep every device busy: ~50 ms kernels (one block per SM, 256 threads)
    // until the time is up.
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    long kernels = 0;
    while (std::chrono::steady_clock::now() < until) {
        for (int d = 0; d < count; ++d) {
            cudaSetDevice(d);
            int sms = 1;
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d);
            spin<<<sms, 256>>>(static_cast<unsigned long long>(clockKhz[d]) * 50, sinks[d]);
            ++kernels;
        }
        for (int d = 0; d < count; ++d) {
            cudaSetDevice(d);
            if (const cudaError_t err = cudaDeviceSynchronize(); err != cudaSuccess) {
                std::fprintf(stderr, "trainyard-gpucheck: device %d: kernel failed: %s\n", d, cudaGetErrorString(err));
                return 3;
            }
        }
    }
    for (int d = 0; d < count; ++d) {
        cudaSetDevice(d);
        cudaFree(buffers[d]);
        cudaFree(sinks[d]);
    }
    std::printf("{\"done\":true,\"seconds\":%.1f,\"kernels\":%ld}\n", seconds, kernels);
    return 0;
}
