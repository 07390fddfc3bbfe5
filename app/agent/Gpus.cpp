#include "Gpus.h"

#include "Posix.h"

#include "core/agentproto/Fields.h"

#include <cstdlib>
#include <cstring>

#include <dlfcn.h>
#include <unistd.h>

namespace ty::agent {

namespace fields = agentproto::fields;

namespace {

// The subset of nvml.h used here (types are ABI-stable across drivers).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr unsigned NVML_TEMPERATURE_GPU = 0;

struct nvmlPciInfo_t {
    char busIdLegacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pciDeviceId;
    unsigned pciSubSystemId;
    char busId[32];
};
struct nvmlMemory_t {
    unsigned long long total, free, used;
};
struct nvmlMemory_v2_t {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
struct nvmlUtilization_t {
    unsigned gpu, memory;
};
struct nvmlProcessInfo_v1_t {
    unsigned pid;
    unsigned long long usedGpuMemory;
};
struct nvmlProcessInfo_v2_t {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
};
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;

struct Api {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    const char* (*errorString)(nvmlReturn_t) = nullptr;
    nvmlReturn_t (*getCount)(unsigned*) = nullptr;
    nvmlReturn_t (*getHandle)(unsigned, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*getUuid)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*getName)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*getPci)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
    nvmlReturn_t (*getMemory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
    nvmlReturn_t (*getMemoryV2)(nvmlDevice_t, nvmlMemory_v2_t*) = nullptr;
    nvmlReturn_t (*getUtil)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
    nvmlReturn_t (*getTemp)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
    nvmlReturn_t (*getPower)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*getProcsV3)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v2_t*) = nullptr;
    nvmlReturn_t (*getProcsV2)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v2_t*) = nullptr;
    nvmlReturn_t (*getProcsV1)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v1_t*) = nullptr;
};
Api g_api;

template <typename F> void sym(void* lib, F& fn, const char* name)
{
    fn = reinterpret_cast<F>(::dlsym(lib, name));
}

std::string nvmlError(nvmlReturn_t r)
{
    if (g_api.errorString)
        return g_api.errorString(r);
    return "NVML error " + std::to_string(r);
}

std::string processName(long pid)
{
    auto comm = readFile("/proc/" + std::to_string(pid) + "/comm");
    if (!comm)
        return {};
    while (!comm->empty() && comm->back() == '\n')
        comm->pop_back();
    return *comm;
}

template <typename Info, typename Fn>
std::vector<GpuProcess> readProcs(Fn fn, nvmlDevice_t dev, const std::string& uuid)
{
    std::vector<GpuProcess> out;
    std::vector<Info> infos(16);
    for (int attempt = 0; attempt < 4; ++attempt) {
        unsigned count = unsigned(infos.size());
        const nvmlReturn_t r = fn(dev, &count, infos.data());
        if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
            infos.resize(count + 8);
            continue;
        }
        if (r != NVML_SUCCESS)
            return out;
        for (unsigned i = 0; i < count; ++i) {
            GpuProcess p;
            p.pid = infos[i].pid;
            p.name = processName(long(infos[i].pid));
            if (infos[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
                p.usedMemoryMib = double(infos[i].usedGpuMemory) / (1024.0 * 1024.0);
            p.gpuUuid = uuid;
            out.push_back(std::move(p));
        }
        return out;
    }
    return out;
}

} // namespace

Nvml::~Nvml()
{
    if (m_ok && g_api.shutdown)
        g_api.shutdown();
    if (m_lib)
        ::dlclose(m_lib);
}

bool Nvml::available()
{
    if (m_tried)
        return m_ok;
    m_tried = true;
    if (const char* off = std::getenv("TRAINYARD_AGENT_NO_NVML"); off && *off && std::strcmp(off, "0") != 0) {
        m_error = "NVML disabled by TRAINYARD_AGENT_NO_NVML";
        return false;
    }
    m_lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m_lib) {
        const char* e = ::dlerror();
        m_error = std::string("cannot load libnvidia-ml.so.1: ") + (e ? e : "unknown error");
        return false;
    }
    sym(m_lib, g_api.init, "nvmlInit_v2");
    sym(m_lib, g_api.shutdown, "nvmlShutdown");
    sym(m_lib, g_api.errorString, "nvmlErrorString");
    sym(m_lib, g_api.getCount, "nvmlDeviceGetCount_v2");
    sym(m_lib, g_api.getHandle, "nvmlDeviceGetHandleByIndex_v2");
    sym(m_lib, g_api.getUuid, "nvmlDeviceGetUUID");
    sym(m_lib, g_api.getName, "nvmlDeviceGetName");
    sym(m_lib, g_api.getPci, "nvmlDeviceGetPciInfo_v3");
    sym(m_lib, g_api.getMemory, "nvmlDeviceGetMemoryInfo");
    sym(m_lib, g_api.getMemoryV2, "nvmlDeviceGetMemoryInfo_v2");
    sym(m_lib, g_api.getUtil, "nvmlDeviceGetUtilizationRates");
    sym(m_lib, g_api.getTemp, "nvmlDeviceGetTemperature");
    sym(m_lib, g_api.getPower, "nvmlDeviceGetPowerUsage");
    sym(m_lib, g_api.getProcsV3, "nvmlDeviceGetComputeRunningProcesses_v3");
    sym(m_lib, g_api.getProcsV2, "nvmlDeviceGetComputeRunningProcesses_v2");
    sym(m_lib, g_api.getProcsV1, "nvmlDeviceGetComputeRunningProcesses");
    if (!g_api.init || !g_api.getCount || !g_api.getHandle) {
        m_error = "libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2";
        return false;
    }
    if (const nvmlReturn_t r = g_api.init(); r != NVML_SUCCESS) {
        m_error = "nvmlInit_v2 failed: " + nvmlError(r);
        return false;
    }
    m_ok = true;
    return true;
}

std::expected<std::vector<GpuInfo>, std::string> Nvml::read()
{
    if (!available())
        return std::unexpected(m_error);
    unsigned count = 0;
    if (const nvmlReturn_t r = g_api.getCount(&count); r != NVML_SUCCESS)
        return std::unexpected("nvmlDeviceGetCount_v2 failed: " + nvmlError(r));
    std::vector<GpuInfo> gpus;
    for (unsigned i = 0; i < count; ++i) {
        nvmlDevice_t dev = nullptr;
        if (const nvmlReturn_t r = g_api.getHandle(i, &dev); r != NVML_SUCCESS)
            return std::unexpected("nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) + ") failed: " + nvmlError(r));
        GpuInfo g;
        g.index = int(i);
        char buf[128];
        if (g_api.getUuid && g_api.getUuid(dev, buf, sizeof buf) == NVML_SUCCESS)
            g.uuid = buf;
        if (g_api.getName && g_api.getName(dev, buf, sizeof buf) == NVML_SUCCESS)
            g.name = buf;
        nvmlPciInfo_t pci{};
        if (g_api.getPci && g_api.getPci(dev, &pci) == NVML_SUCCESS) {
            pci.busId[sizeof pci.busId - 1] = 0;
            g.pciBusId = pci.busId;
        }
        // _v2 reports "used" without the driver-reserved memory, as nvidia-smi does.
        nvmlMemory_v2_t mem2{};
        mem2.version = unsigned(sizeof(nvmlMemory_v2_t)) | (2U << 24);
        nvmlMemory_t mem{};
        constexpr double MiB = 1024.0 * 1024.0;
        if (g_api.getMemoryV2 && g_api.getMemoryV2(dev, &mem2) == NVML_SUCCESS) {
            g.memoryTotalMib = double(mem2.total) / MiB;
            g.memoryUsedMib = double(mem2.used) / MiB;
        } else if (g_api.getMemory && g_api.getMemory(dev, &mem) == NVML_SUCCESS) {
            g.memoryTotalMib = double(mem.total) / MiB;
            g.memoryUsedMib = double(mem.used) / MiB;
        }
        nvmlUtilization_t util{};
        if (g_api.getUtil && g_api.getUtil(dev, &util) == NVML_SUCCESS)
            g.utilizationPct = util.gpu;
        unsigned temp = 0;
        if (g_api.getTemp && g_api.getTemp(dev, NVML_TEMPERATURE_GPU, &temp) == NVML_SUCCESS)
            g.temperatureC = temp;
        unsigned mw = 0;
        if (g_api.getPower && g_api.getPower(dev, &mw) == NVML_SUCCESS)
            g.powerW = mw / 1000.0;
        if (g_api.getProcsV3)
            g.processes = readProcs<nvmlProcessInfo_v2_t>(g_api.getProcsV3, dev, g.uuid);
        else if (g_api.getProcsV2)
            g.processes = readProcs<nvmlProcessInfo_v2_t>(g_api.getProcsV2, dev, g.uuid);
        else if (g_api.getProcsV1)
            g.processes = readProcs<nvmlProcessInfo_v1_t>(g_api.getProcsV1, dev, g.uuid);
        gpus.push_back(std::move(g));
    }
    return gpus;
}

Json gpusToJson(const std::vector<GpuInfo>& gpus, const std::map<long, std::string>& runByPgid)
{
    auto opt = [](const std::optional<double>& v) -> Json { return v ? Json(*v) : Json(nullptr); };
    Json arr = Json::array();
    for (const auto& g : gpus) {
        Json procs = Json::array();
        for (const auto& p : g.processes) {
            Json pj{{fields::kPid, p.pid}, {fields::kName, p.name}, {fields::kUsedMemoryMib, opt(p.usedMemoryMib)}};
            const pid_t pg = ::getpgid(pid_t(p.pid));
            if (auto it = pg > 0 ? runByPgid.find(long(pg)) : runByPgid.end(); it != runByPgid.end())
                pj[fields::kRun] = it->second;
            procs.push_back(std::move(pj));
        }
        arr.push_back(Json{{fields::kIndex, g.index}, {fields::kUuid, g.uuid}, {fields::kName, g.name},
                {fields::kPciBusId, g.pciBusId}, {fields::kMemoryTotalMib, opt(g.memoryTotalMib)},
                {fields::kMemoryUsedMib, opt(g.memoryUsedMib)}, {fields::kUtilizationPct, opt(g.utilizationPct)},
                {fields::kTemperatureC, opt(g.temperatureC)}, {fields::kPowerW, opt(g.powerW)},
                {fields::kProcesses, std::move(procs)}});
    }
    return arr;
}

std::vector<std::string> nvidiaSmiGpuArgv()
{
    std::string q = "--query-gpu=";
    const auto& f = defaultGpuQueryFields();
    for (std::size_t i = 0; i < f.size(); ++i)
        q += (i ? "," : "") + f[i];
    return {"nvidia-smi", q, "--format=csv,noheader,nounits"};
}

std::vector<std::string> nvidiaSmiAppsArgv()
{
    std::string q = "--query-compute-apps=";
    const auto& f = defaultComputeAppsFields();
    for (std::size_t i = 0; i < f.size(); ++i)
        q += (i ? "," : "") + f[i];
    return {"nvidia-smi", q, "--format=csv,noheader,nounits"};
}

} // namespace ty::agent
