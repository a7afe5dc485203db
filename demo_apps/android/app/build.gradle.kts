// The chat app: Compose UI over chat-core. App name, id and model asset come from
// gradle.properties (the one place `pocket package --app android` fills in).
plugins {
    alias(libs.plugins.android.application)
    alias(libs.plugins.kotlin.android)
    alias(libs.plugins.compose.compiler)
}

val appName = providers.gradleProperty("pocketAppName").get()
val appId = providers.gradleProperty("pocketAppId").get()
val modelAsset = providers.gradleProperty("pocketModelAsset").get()

android {
    namespace = "dev.pocket.demo.chat"
    compileSdk = 34
    defaultConfig {
        applicationId = appId
        minSdk = 26
        targetSdk = 34
        versionCode = 1
        versionName = "0.1.0"
        resValue("string", "app_name", appName)
        buildConfigField("String", "MODEL_ASSET", "\"$modelAsset\"")
        ndk { abiFilters += listOf("arm64-v8a", "x86_64") }
        testInstrumentationRunner = "androidx.test.runner.AndroidJUnitRunner"
    }
    buildFeatures {
        compose = true
        buildConfig = true
    }
    // Stored, not deflated: PocketAndroid.loadLlmAsset maps the model straight from the APK.
    androidResources { noCompress += "pocket" }
    packaging { jniLibs { useLegacyPackaging = false } }
    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    kotlinOptions { jvmTarget = "17" }
}

dependencies {
    implementation(project(":chat-core"))
    implementation(libs.pocket.android)
    implementation(platform(libs.compose.bom))
    implementation(libs.compose.ui)
    implementation(libs.compose.material3)
    implementation(libs.compose.material.icons)
    implementation(libs.androidx.activity.compose)
    implementation(libs.androidx.lifecycle.viewmodel.compose)
    implementation(libs.androidx.lifecycle.runtime.compose)
    implementation(libs.kotlinx.coroutines.android)
    androidTestImplementation(libs.androidx.test.runner)
    androidTestImplementation(libs.androidx.test.ext.junit)
    androidTestImplementation(platform(libs.compose.bom))
    androidTestImplementation(libs.compose.ui.test.junit4)
    debugImplementation(libs.compose.ui.test.manifest)
}
