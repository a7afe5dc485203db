// The chat logic without UI (ChatSession, TokenFlow, ModelFiles). Plain Kotlin over
// dev.pocket.LlmModule; an Android library only because the Pocket AAR is one. Its tests live in
// src/hostTest and run on the host JVM against the real runtime (chat-core/test.sh).
plugins {
    alias(libs.plugins.android.library)
    alias(libs.plugins.kotlin.android)
}

android {
    namespace = "dev.pocket.chat"
    compileSdk = 34
    defaultConfig { minSdk = 26 }
    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    kotlinOptions { jvmTarget = "17" }
}

dependencies {
    api(libs.pocket.android)
    api(libs.kotlinx.coroutines.android)
}
