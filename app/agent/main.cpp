// placeholder, replaced by the agent implementation
int main() { return 0; }
